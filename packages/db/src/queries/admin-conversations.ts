import { and, asc, desc, eq, getTableColumns, gt, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import { conversations } from '../schema/conversations.ts';
import { sessions } from '../schema/sessions.ts';
import { turns } from '../schema/turns.ts';
import type { DbExecutor } from './admin-executor.ts';

type BusyMode = 'interrupt' | 'queue' | 'collect' | 'steer';

export interface ConversationFilter {
  platform?: string;
  status?: 'active' | 'suspended';
  /** true: a turn is running now; false: none is. */
  busy?: boolean;
  busyMode?: BusyMode;
  updatedSince?: Date;
  /** The last id of the previous page (pages go from newest to oldest id). */
  cursor?: number;
  limit: number;
}

export type ConversationSummary = typeof conversations.$inferSelect & {
  runningTurnId: number | null;
  /** Pending inbound events: input no turn has taken yet. */
  queuedInput: number;
};

export interface SessionSummary {
  id: number;
  parentSessionId: number | null;
  status: string;
  endReason: string | null;
  messageCount: number;
  tokenEstimate: number;
  createdAt: Date;
  endedAt: Date | null;
}

export interface ConversationDetail {
  conversation: ConversationSummary;
  /** Oldest first: the root, …, the head (the current or the pre-suspension session). */
  chain: SessionSummary[];
  runningTurn: { id: number; sessionId: number; workerId: string | null; startedAt: Date } | null;
}

// The outer row is named in full: drizzle writes a one-table select's columns unqualified,
// and an unqualified "id" inside these subqueries would mean the subquery's own table.
const runningTurnId = sql<number | null>`(select t.id from turns t where t.conversation_id = "conversations"."id" and t.status = 'running' limit 1)`.mapWith(
  (value: string | number | null) => (value === null ? null : Number(value)),
);
const queuedInput = sql<number>`(select count(*)::int from inbound_events e where e.conversation_id = "conversations"."id" and e.status = 'pending')`.mapWith(Number);

/** Conversations, newest id first, with keyset pagination on the id (stable while rows change). */
export async function listConversations(db: DbExecutor, filter: ConversationFilter): Promise<{ items: ConversationSummary[]; nextCursor: number | null }> {
  const where: SQL[] = [];
  if (filter.platform) where.push(eq(conversations.platform, filter.platform));
  if (filter.status) where.push(eq(conversations.status, filter.status));
  if (filter.busyMode) where.push(eq(conversations.busyMode, filter.busyMode));
  if (filter.updatedSince) where.push(gte(conversations.updatedAt, filter.updatedSince));
  if (filter.cursor !== undefined) where.push(lt(conversations.id, filter.cursor));
  if (filter.busy !== undefined) {
    const running = sql`exists (select 1 from turns t where t.conversation_id = "conversations"."id" and t.status = 'running')`;
    where.push(filter.busy ? running : sql`not ${running}`);
  }
  const rows = await db
    .select({ ...getTableColumns(conversations), runningTurnId, queuedInput })
    .from(conversations)
    .where(and(...where))
    .orderBy(desc(conversations.id))
    .limit(filter.limit + 1);
  const items = rows.slice(0, filter.limit);
  return { items, nextCursor: rows.length > filter.limit ? (items.at(-1)?.id ?? null) : null };
}

export async function loadConversationSummary(db: DbExecutor, conversationId: number): Promise<ConversationSummary | undefined> {
  const [row] = await db
    .select({ ...getTableColumns(conversations), runningTurnId, queuedInput })
    .from(conversations)
    .where(eq(conversations.id, conversationId));
  return row;
}

/** One conversation with its session chain (followed through parent_session_id) and its running turn. */
export async function loadConversationDetail(db: DbExecutor, conversationId: number): Promise<ConversationDetail | undefined> {
  const conversation = await loadConversationSummary(db, conversationId);
  if (!conversation) return undefined;
  const head = conversation.currentSessionId ?? conversation.preSuspendSessionId;
  const chainRows =
    head === null
      ? []
      : await db.execute<{ id: string; depth: number }>(sql`
          with recursive chain as (
            select s.id, s.parent_session_id, 0 as depth from sessions s where s.id = ${head} and s.conversation_id = ${conversationId}
            union all
            select p.id, p.parent_session_id, c.depth + 1 from sessions p join chain c on p.id = c.parent_session_id where c.depth < 10000
          )
          select id, depth from chain`);
  const ids = chainRows.map((r) => Number(r.id));
  const chain =
    ids.length === 0
      ? []
      : await db
          .select({
            id: sessions.id,
            parentSessionId: sessions.parentSessionId,
            status: sessions.status,
            endReason: sessions.endReason,
            messageCount: sessions.messageCount,
            tokenEstimate: sessions.tokenEstimate,
            createdAt: sessions.createdAt,
            endedAt: sessions.endedAt,
          })
          .from(sessions)
          .where(and(eq(sessions.conversationId, conversationId), inArray(sessions.id, ids)))
          .orderBy(asc(sessions.id));
  const [running] = await db
    .select({ id: turns.id, sessionId: turns.sessionId, workerId: turns.workerId, startedAt: turns.startedAt })
    .from(turns)
    .where(and(eq(turns.conversationId, conversationId), eq(turns.status, 'running')));
  return { conversation, chain, runningTurn: running ?? null };
}

/** Whether `sessionId` is one of the conversation's sessions (any chain, any status). */
export async function sessionBelongsTo(db: DbExecutor, conversationId: number, sessionId: number): Promise<boolean> {
  const rows = await db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.id, sessionId), eq(sessions.conversationId, conversationId)));
  return rows.length === 1;
}

/** Conversations whose restart counter is above zero, highest first (docs/restarts.md). */
export async function listRestartCounters(db: DbExecutor, limit: number): Promise<ConversationSummary[]> {
  return db
    .select({ ...getTableColumns(conversations), runningTurnId, queuedInput })
    .from(conversations)
    .where(gt(conversations.restartCount, 0))
    .orderBy(desc(conversations.restartCount), desc(conversations.id))
    .limit(limit);
}

export async function listSuspendedConversations(db: DbExecutor, limit: number): Promise<ConversationSummary[]> {
  return db
    .select({ ...getTableColumns(conversations), runningTurnId, queuedInput })
    .from(conversations)
    .where(eq(conversations.status, 'suspended'))
    .orderBy(desc(conversations.suspendedAt), desc(conversations.id))
    .limit(limit);
}
