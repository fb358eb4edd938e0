import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { conversations } from '../schema/conversations.ts';
import { inboundEvents } from '../schema/inbound-events.ts';
import type { messages} from '../schema/messages.ts';
import { type StoredToolCall } from '../schema/messages.ts';
import { sessions } from '../schema/sessions.ts';
import type { TurnStatus } from '../schema/turns.ts';
import type { OutboxRow } from './outbox-store.ts';
import { toMessage, toOutbox, type JsonRow } from './row-mappers.ts';

export type ConversationRow = typeof conversations.$inferSelect;
export type InboundEventRow = typeof inboundEvents.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;

export async function loadConversation(db: Database, conversationId: number): Promise<ConversationRow | undefined> {
  const [row] = await db.select().from(conversations).where(eq(conversations.id, conversationId));
  return row;
}

/**
 * Returns the conversation's current session, creating the first one if it
 * has none. The pointer is set by compare-and-set, so two callers can never
 * give one conversation two first sessions.
 */
export async function ensureCurrentSession(db: Database, conversation: ConversationRow): Promise<number> {
  if (conversation.currentSessionId !== null) return conversation.currentSessionId;
  return db.transaction(async (tx) => {
    const [created] = await tx.insert(sessions).values({ conversationId: conversation.id }).returning({ id: sessions.id });
    if (!created) throw new Error('session insert returned nothing');
    const moved = await tx
      .update(conversations)
      .set({ currentSessionId: created.id })
      .where(and(eq(conversations.id, conversation.id), isNull(conversations.currentSessionId)))
      .returning({ id: conversations.id });
    if (moved.length === 1) return created.id;
    tx.rollback();
    return 0;
  }).catch(async (error: unknown) => {
    const again = await loadConversation(db, conversation.id);
    if (again?.currentSessionId) return again.currentSessionId;
    throw error;
  });
}

export async function loadPendingInbound(db: Database, conversationId: number, limit: number): Promise<InboundEventRow[]> {
  return db
    .select()
    .from(inboundEvents)
    .where(and(eq(inboundEvents.conversationId, conversationId), eq(inboundEvents.status, 'pending')))
    .orderBy(asc(inboundEvents.id))
    .limit(limit);
}

/**
 * A session's messages in order, or only those after `afterSeq` (the history
 * cache's top-up). One JSON value mapped by the schema (row-mappers.ts): a
 * prepared postgres.js statement, and far less per-row work than drizzle's
 * row mapping, which dominated reads of long sessions.
 */
export async function loadSessionMessages(db: Database, sessionId: number, afterSeq = 0): Promise<MessageRow[]> {
  const [row] = await db.$client<{ rows: JsonRow[] }[]>`
    select coalesce(json_agg(m order by m.seq), '[]') as rows
    from messages m where m.session_id = ${sessionId} and m.seq > ${afterSeq}`;
  return (row?.rows ?? []).map(toMessage);
}

export interface BegunTurn {
  turnId: number;
}

const uniqueViolation = '23505';

/** A running turn from a lost worker was found and cut off; no turn was started. */
export class StaleTurnCutOff extends Error {
  readonly code = 'STALE_TURN_CUT_OFF';
  constructor(readonly conversationId: number) {
    super(`conversation ${conversationId} had a running turn from a lost worker; it was cut off`);
    this.name = 'StaleTurnCutOff';
  }
}

/**
 * Cuts off a running turn whose worker lost the lease (crashed, or stalled
 * past the TTL) before anyone noticed — counted as a restart like any other
 * — and throws StaleTurnCutOff so the caller applies the restart rules
 * before any new turn. Only the lease holder calls this.
 */
export async function cutOffStaleTurn(db: Database, conversationId: number): Promise<never> {
  await cutOffRunningTurns(db, { conversationId });
  throw new StaleTurnCutOff(conversationId);
}

/**
 * Inserts the running turn. Only the holder of the conversation's lease calls
 * this, after checking the conversation's last turn; the partial unique index
 * still refuses a second running turn, and then the stale one is cut off.
 * On every turn's path: a postgres.js statement, prepared once per connection
 * (see commitTurn).
 */
export async function beginTurn(db: Database, input: { conversationId: number; sessionId: number; workerId: string }): Promise<BegunTurn> {
  try {
    const [row] = await db.$client<{ id: string }[]>`
      insert into turns (conversation_id, session_id, worker_id, status)
      values (${input.conversationId}, ${input.sessionId}, ${input.workerId}, 'running')
      returning id`;
    if (!row) throw new Error('turn insert returned nothing');
    return { turnId: Number(row.id) };
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code !== uniqueViolation && (error as { code?: string }).code !== uniqueViolation) throw error;
    return cutOffStaleTurn(db, input.conversationId);
  }
}

/**
 * Ends running turns that a restart cut off — those of one conversation, or
 * of one worker (graceful stop, or found dead by its heartbeat) — and counts
 * one restart for each affected conversation (DESIGN §9). Their input stays
 * pending, so the next turn resumes it. Returns the affected conversations.
 */
export async function cutOffRunningTurns(db: Database, where: { conversationId?: number; workerId?: string }): Promise<number[]> {
  const filter =
    where.conversationId !== undefined ? sql`conversation_id = ${where.conversationId}` : sql`worker_id = ${where.workerId ?? ''}`;
  const rows = await db.execute<{ conversation_id: string }>(sql`
    with cut as (
      update turns set status = 'failed', error = 'cut_off_by_restart', cut_off_at = now(), ended_at = now()
      where status = 'running' and ${filter}
      returning conversation_id
    )
    update conversations c set restart_count = c.restart_count + 1, updated_at = now()
    from (select distinct conversation_id from cut) x
    where c.id = x.conversation_id
    returning c.id as conversation_id`);
  return rows.map((r) => Number(r.conversation_id));
}

export interface NewTranscriptMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  tokens: number;
  toolCalls?: StoredToolCall[];
  toolCallId?: string;
  toolName?: string;
  inboundEventId?: number;
}

export interface CommitTurnInput {
  /** Absent for a chat command, which consumes its event and replies without a turn. */
  turnId?: number;
  conversationId: number;
  sessionId: number;
  status: Exclude<TurnStatus, 'queued' | 'running'>;
  error?: string;
  /** The inbound events this turn consumed. */
  inboundEventIds: number[];
  messages: NewTranscriptMessage[];
  /** Reply parts, in order, delivered after commit. */
  replies: { platform: string; target: Record<string, unknown>; chunks: string[] }[];
}

/**
 * Writes everything a turn produced atomically (DESIGN §11): the transcript
 * entries with consecutive per-session sequence numbers, the consumed inbound
 * events marked done, the outbox rows, and the turn's end. Returns the
 * conversation's pending outbox rows, so delivery needs no second read.
 * One statement of data-modifying CTEs rather than a transaction of seven,
 * because it runs on every turn and each round trip is paid in reply latency;
 * written for postgres.js directly (not drizzle's `execute`), because only
 * postgres.js prepares it once per connection instead of planning it anew
 * every turn (drizzle sends unnamed queries unprepared).
 */
export async function commitTurn(db: Database, input: CommitTurnInput): Promise<{ outbox: OutboxRow[]; messages: MessageRow[] }> {
  const tokens = input.messages.reduce((sum, m) => sum + m.tokens, 0);
  const messageRows = input.messages.map((m, i) => ({
    ord: i + 1,
    role: m.role,
    content: m.content,
    tokens: m.tokens,
    tool_calls: m.toolCalls ?? null,
    tool_call_id: m.toolCallId ?? null,
    tool_name: m.toolName ?? null,
    inbound_event_id: m.inboundEventId ?? null,
  }));
  const outboxRows = input.replies.flatMap((reply) => reply.chunks.map((text, chunk_index) => ({ platform: reply.platform, target: reply.target, chunk_index, text })));
  const count = input.messages.length;
  const turnId = input.turnId ?? null;
  const eventIds = `{${input.inboundEventIds.join(',')}}`;
  const [row] = await db.$client<{ outbox: JsonRow[] | null; messages: JsonRow[] | null }[]>`
    with s as (
      update sessions set last_seq = last_seq + ${count}, message_count = message_count + ${count}, token_estimate = token_estimate + ${tokens}
      where id = ${input.sessionId} and ${count}::int > 0
      returning last_seq
    ), m as (
      insert into messages (session_id, seq, role, content, tokens, tool_calls, tool_call_id, tool_name, inbound_event_id, turn_id)
      select ${input.sessionId}, s.last_seq - ${count} + r.ord, r.role, r.content, r.tokens, r.tool_calls, r.tool_call_id, r.tool_name, r.inbound_event_id, ${turnId}
      from s, jsonb_to_recordset(${JSON.stringify(messageRows)}::jsonb)
        as r(ord int, role text, content text, tokens int, tool_calls jsonb, tool_call_id text, tool_name text, inbound_event_id bigint)
      returning *
    ), e as (
      update inbound_events set status = 'done', turn_id = ${turnId} where id = any(${eventIds}::bigint[])
      returning 1
    ), c as (
      -- Input was taken, so the queue is below its cap again and a later overflow is told anew.
      update conversations set updated_at = now(), input_overflow_at = null
      where id = ${input.conversationId} and cardinality(${eventIds}::bigint[]) > 0
      returning 1
    ), o as (
      insert into outbox (conversation_id, turn_id, platform, target, chunk_index, text)
      select ${input.conversationId}, ${turnId}, r.platform, r.target, r.chunk_index, r.text
      from jsonb_to_recordset(${JSON.stringify(outboxRows)}::jsonb) as r(platform text, target jsonb, chunk_index int, text text)
      returning *
    ), t as (
      update turns set status = ${input.status}, error = ${input.error ?? null}, ended_at = now()
      where id = ${turnId}
      returning 1
    )
    -- Everything now waiting to go out, in order: earlier notices (from the statement's snapshot) and this turn's parts.
    select coalesce((select json_agg(x order by x.id) from (
      select * from outbox where conversation_id = ${input.conversationId} and status = 'pending'
      union all select * from o
    ) x), '[]') as outbox,
    -- The stored transcript rows, so the worker's history cache takes them without reading them back.
    (select json_agg(m order by m.seq) from m) as messages`;
  return { outbox: (row?.outbox ?? []).map(toOutbox), messages: (row?.messages ?? []).map(toMessage) };
}
