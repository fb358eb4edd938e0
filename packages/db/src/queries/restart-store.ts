import { sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import type { DbExecutor } from './admin-executor.ts';

export interface RestartLoopSuspension {
  conversationId: number;
  /** The session set aside (null: the conversation had none). */
  sessionId: number | null;
  /**
   * `parked`: a first suspension; the session stays active for an operator's
   * resume. `finalized`: the conversation was already suspended and the
   * fresh session the user went on in looped too; it can never come back.
   */
  sessionEnd: 'parked' | 'finalized';
  /** What looped: turns cut off by restarts (`restart_loop`), or runtime children dying mid-turn (`runtime_crash_loop`). */
  reason: SuspensionLoopReason;
}

export type SuspensionLoopReason = 'restart_loop' | 'runtime_crash_loop';

/**
 * Conversations cut off by restarts `threshold` times in a row are suspended
 * instead of resumed (docs/restarts.md): reason `restart_loop`, counter cleared, the
 * session set aside, and the input of the cut-off turn held back
 * (status `held`) so it is not resumed behind the user's back; an operator's
 * resume releases it. One rule for both cases: a first suspension parks the
 * session; an already suspended conversation whose fresh session loops again
 * has that session finalized (the original stays parked for operators).
 *
 * Atomic and fenced like a commit (issue 16, defect 7): one statement, and a
 * conversation with a running turn is never suspended under it
 * (its lease holder is alive, or the turn is cut off and counted first by the
 * restart rules). A turn never starts at the threshold either: beginTurn
 * refuses it in its insert.
 *
 * Runtime crashes in a row (`runtime_crash_streak`, docs/codex.md) count
 * against the same threshold and are suspended by the same rule, with
 * reason `runtime_crash_loop`; both counters are cleared.
 */
export async function suspendRestartLoops(db: Database, threshold: number): Promise<RestartLoopSuspension[]> {
  const rows = await db.execute<{ id: string; session_id: string | null; again: boolean; reason: SuspensionLoopReason }>(sql`
    with loop as (
      select c.id, c.current_session_id, c.status = 'suspended' as again,
        case when c.restart_count >= ${threshold} then 'restart_loop' else 'runtime_crash_loop' end as reason
      from conversations c
      where (c.restart_count >= ${threshold} or c.runtime_crash_streak >= ${threshold})
        and (c.status = 'active' or (c.status = 'suspended' and c.current_session_id is not null))
        and not exists (select 1 from turns t where t.conversation_id = c.id and t.status = 'running')
      order by c.id limit 500
      for update skip locked
    ), finalized as (
      update sessions set status = 'finalized', end_reason = loop.reason, ended_at = now()
      from loop where loop.again and sessions.id = loop.current_session_id and sessions.status = 'active'
    ), held as (
      update inbound_events set status = 'held' from loop where inbound_events.conversation_id = loop.id and inbound_events.status = 'pending'
    )
    update conversations c set status = 'suspended',
      suspend_reason = case when loop.again then c.suspend_reason else loop.reason end,
      pre_suspend_session_id = case when loop.again then c.pre_suspend_session_id else loop.current_session_id end,
      suspended_at = now(), current_session_id = null, restart_count = 0, runtime_crash_streak = 0, updated_at = now()
    from loop where c.id = loop.id
    returning c.id, loop.current_session_id as session_id, loop.again, loop.reason`);
  return rows.map((row) => ({
    conversationId: Number(row.id),
    sessionId: row.session_id === null ? null : Number(row.session_id),
    sessionEnd: row.again ? 'finalized' : 'parked',
    reason: row.reason,
  }));
}

/** Operator resume of a restart-loop suspension: the held input runs again, in order. */
export async function releaseHeldInput(db: DbExecutor, conversationId: number): Promise<number> {
  const rows = await db.execute(sql`update inbound_events set status = 'pending' where conversation_id = ${conversationId} and status = 'held' returning id`);
  return rows.length;
}
