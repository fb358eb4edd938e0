import type { Database } from '../client.ts';
import { toConversation, toInbound, toOutbox, toSession, type ConversationRow, type InboundEventRow, type JsonRow, type OutboxRow, type SessionRow } from './table-rows.ts';

/** The conversation's most recent turn, for the resume rule and stale-turn detection (docs/restarts.md). */
export interface LastTurn {
  id: number;
  status: string;
  sessionId: number;
  cutOffAt: Date | null;
}

/** Everything the lease holder needs to decide its next step, read in one round trip. */
export interface TurnState {
  conversation: ConversationRow;
  /** The current session; undefined before the first turn (or after a suspension). */
  session: SessionRow | undefined;
  /** Pending input, oldest first, at most `limit`. */
  pending: InboundEventRow[];
  /** Replies and notices not yet delivered, oldest first: they go out before anything newer. */
  outbox: OutboxRow[];
  lastTurn: LastTurn | undefined;
  /**
   * The user of the oldest pending input (the one a turn starting now counts
   * against, beginTurn's `platform:account:user`) and how many turns of that
   * user run now, in any conversation, on any worker; undefined with no input.
   */
  pendingUser: { key: string; runningTurns: number } | undefined;
}

/**
 * One statement instead of six (conversation, session, pending input,
 * pending outbox, last turn, the input's user's running turns): this runs before every turn and after it, and
 * each round trip is paid in reply latency. All parts come from one snapshot.
 */
export async function loadTurnState(db: Database, conversationId: number, limit: number): Promise<TurnState | undefined> {
  const [row] = await db.$client<
    { conversation: JsonRow; session: JsonRow | null; pending: JsonRow[]; outbox: JsonRow[]; last_turn: JsonRow | null; pending_user: { key: string; running: number } | null }[]
  >`
    select row_to_json(c) as conversation,
      (select row_to_json(s) from sessions s where s.id = c.current_session_id) as session,
      coalesce((select json_agg(e order by e.id) from (
        select * from inbound_events where conversation_id = c.id and status = 'pending' order by id limit ${limit}
      ) e), '[]') as pending,
      coalesce((select json_agg(o order by o.id) from (
        select * from outbox where conversation_id = c.id and status = 'pending' order by id
      ) o), '[]') as outbox,
      (select json_build_object('id', t.id, 'status', t.status, 'session_id', t.session_id, 'cut_off_at', t.cut_off_at)
        from turns t where t.conversation_id = c.id order by t.id desc limit 1) as last_turn,
      -- USER_MAX_RUNNING_TURNS, checked before a turn starts anything (beginTurn enforces it exactly):
      -- the same key as beginTurn's, counted on turns_user_slot_idx.
      (select json_build_object('key', u.key, 'running', (select count(*) from turns t where t.user_key = u.key and t.status = 'running'))
        from (select e.platform || ':' || e.account_id || ':' || e.user_id as key
          from inbound_events e where e.conversation_id = c.id and e.status = 'pending' order by e.id limit 1) u) as pending_user
    from conversations c where c.id = ${conversationId}`;
  if (!row) return undefined;
  const last = row.last_turn;
  return {
    conversation: toConversation(row.conversation),
    session: row.session ? toSession(row.session) : undefined,
    pending: row.pending.map(toInbound),
    outbox: row.outbox.map(toOutbox),
    lastTurn: last
      ? { id: Number(last.id), status: String(last.status), sessionId: Number(last.session_id), cutOffAt: last.cut_off_at ? new Date(last.cut_off_at as string) : null }
      : undefined,
    pendingUser: row.pending_user ? { key: row.pending_user.key, runningTurns: Number(row.pending_user.running) } : undefined,
  };
}

/**
 * True when input waits, or a reply or notice was never tried: the lease
 * holder's last look before it lets the conversation go (the lost-wake-up
 * race, docs/turns.md). Rows waiting for a retry are the sweep's, so a row
 * that cannot be sent yet never keeps a worker spinning.
 */
export async function hasPendingWork(db: Database, conversationId: number): Promise<boolean> {
  const [row] = await db.$client<{ found: boolean }[]>`
    select exists(select 1 from inbound_events where conversation_id = ${conversationId} and status = 'pending')
      or exists(select 1 from outbox where conversation_id = ${conversationId} and status = 'pending' and attempts = 0) as found`;
  return row?.found ?? false;
}
