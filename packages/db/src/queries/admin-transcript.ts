import { sql } from 'drizzle-orm';
import type { StoredToolCall } from '../schema/messages.ts';
import type { DbExecutor } from './admin-executor.ts';

export interface TranscriptPosition {
  sessionId: number;
  seq: number;
}

export interface TranscriptQuery {
  conversationId: number;
  /** Where the chain walk starts; the current (or pre-suspension) session when absent. */
  headSessionId?: number;
  /** Exclusive: the page starts after this message in the chosen order. */
  after?: TranscriptPosition;
  order: 'asc' | 'desc';
  limit: number;
}

export interface TranscriptMessage {
  id: number;
  sessionId: number;
  seq: number;
  role: 'user' | 'assistant' | 'tool';
  kind: 'message' | 'summary';
  content: string;
  toolCalls: StoredToolCall[] | null;
  toolCallId: string | null;
  toolName: string | null;
  turnId: number | null;
  createdAt: Date;
}

interface Row extends Record<string, unknown> {
  id: string;
  session_id: string;
  seq: number;
  role: TranscriptMessage['role'];
  kind: TranscriptMessage['kind'];
  content: string;
  tool_calls: StoredToolCall[] | null;
  tool_call_id: string | null;
  tool_name: string | null;
  turn_id: string | null;
  created_ms: number;
}

/**
 * A page of the transcript across the whole session chain, in ONE query: a
 * recursive walk up parent_session_id from the head, joined to the messages.
 * A child session is always created after its parent, so (session id, seq)
 * is the transcript's order. Only stored messages appear: API-only context
 * is never written, so it cannot leak here.
 */
export async function loadTranscriptPage(db: DbExecutor, query: TranscriptQuery): Promise<{ messages: TranscriptMessage[]; next: TranscriptPosition | null }> {
  const head =
    query.headSessionId !== undefined
      ? sql`${query.headSessionId}::bigint`
      : sql`(select coalesce(current_session_id, pre_suspend_session_id) from conversations where id = ${query.conversationId})`;
  const after = query.after;
  const position =
    after === undefined
      ? sql`true`
      : query.order === 'asc'
        ? sql`(m.session_id, m.seq) > (${after.sessionId}::bigint, ${after.seq}::int)`
        : sql`(m.session_id, m.seq) < (${after.sessionId}::bigint, ${after.seq}::int)`;
  const direction = query.order === 'asc' ? sql`asc` : sql`desc`;
  const rows = await db.execute<Row>(sql`
    with recursive chain as (
      select s.id, s.parent_session_id, 0 as depth from sessions s
      where s.id = ${head} and s.conversation_id = ${query.conversationId}
      union all
      select p.id, p.parent_session_id, c.depth + 1 from sessions p join chain c on p.id = c.parent_session_id
      where c.depth < 10000
    )
    select m.id, m.session_id, m.seq, m.role, m.kind, m.content, m.tool_calls, m.tool_call_id, m.tool_name, m.turn_id,
      (extract(epoch from m.created_at) * 1000)::float8 as created_ms
    from messages m join chain c on c.id = m.session_id
    where ${position}
    order by m.session_id ${direction}, m.seq ${direction}
    limit ${query.limit + 1}`);
  const page = rows.slice(0, query.limit).map(toMessage);
  const last = page.at(-1);
  return { messages: page, next: rows.length > query.limit && last ? { sessionId: last.sessionId, seq: last.seq } : null };
}

function toMessage(row: Row): TranscriptMessage {
  return {
    id: Number(row.id),
    sessionId: Number(row.session_id),
    seq: row.seq,
    role: row.role,
    kind: row.kind,
    content: row.content,
    toolCalls: row.tool_calls,
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    turnId: row.turn_id === null ? null : Number(row.turn_id),
    createdAt: new Date(Number(row.created_ms)),
  };
}
