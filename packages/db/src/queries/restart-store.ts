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
}

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
 */
export async function suspendRestartLoops(db: Database, threshold: number): Promise<RestartLoopSuspension[]> {
  const rows = await db.execute<{ id: string; session_id: string | null; again: boolean }>(sql`
    with loop as (
      select c.id, c.current_session_id, c.status = 'suspended' as again from conversations c
      where c.restart_count >= ${threshold}
        and (c.status = 'active' or (c.status = 'suspended' and c.current_session_id is not null))
        and not exists (select 1 from turns t where t.conversation_id = c.id and t.status = 'running')
      order by c.id limit 500
      for update skip locked
    ), finalized as (
      update sessions set status = 'finalized', end_reason = 'restart_loop', ended_at = now()
      from loop where loop.again and sessions.id = loop.current_session_id and sessions.status = 'active'
    ), held as (
      update inbound_events set status = 'held' from loop where inbound_events.conversation_id = loop.id and inbound_events.status = 'pending'
    )
    update conversations c set status = 'suspended',
      suspend_reason = case when loop.again then c.suspend_reason else 'restart_loop' end,
      pre_suspend_session_id = case when loop.again then c.pre_suspend_session_id else loop.current_session_id end,
      suspended_at = now(), current_session_id = null, restart_count = 0, updated_at = now()
    from loop where c.id = loop.id
    returning c.id, loop.current_session_id as session_id, loop.again`);
  return rows.map((row) => ({
    conversationId: Number(row.id),
    sessionId: row.session_id === null ? null : Number(row.session_id),
    sessionEnd: row.again ? 'finalized' : 'parked',
  }));
}

/** Operator resume of a restart-loop suspension: the held input runs again, in order. */
export async function releaseHeldInput(db: DbExecutor, conversationId: number): Promise<number> {
  const rows = await db.execute(sql`update inbound_events set status = 'pending' where conversation_id = ${conversationId} and status = 'held' returning id`);
  return rows.length;
}
