import { sql } from 'drizzle-orm';
import type { Database } from '../client.ts';

/**
 * Conversations cut off by restarts `threshold` times in a row are suspended
 * instead of resumed (docs/restarts.md): reason `restart_loop`, counter cleared, the
 * session parked for operators, and the input of the cut-off turn held back
 * (status `held`) so it is not resumed behind the user's back; an operator's
 * resume releases it.
 *
 * Atomic and fenced like a commit (issue 16, defect 7): one statement per
 * case, and a conversation with a running turn is never suspended under it
 * (its lease holder is alive, or the turn is cut off and counted first by the
 * restart rules). A turn never starts at the threshold either: beginTurn
 * refuses it in its insert.
 */
export async function suspendRestartLoops(db: Database, threshold: number): Promise<{ conversationId: number; sessionId: number | null }[]> {
  const fresh = await db.execute<{ id: string; session_id: string | null }>(sql`
    with loop as (
      select c.id, c.current_session_id from conversations c
      where c.status = 'active' and c.restart_count >= ${threshold}
        and not exists (select 1 from turns t where t.conversation_id = c.id and t.status = 'running')
      order by c.id limit 500
      for update skip locked
    ), held as (
      update inbound_events set status = 'held' from loop where inbound_events.conversation_id = loop.id and inbound_events.status = 'pending'
    )
    update conversations c set status = 'suspended', suspend_reason = 'restart_loop', suspended_at = now(),
      pre_suspend_session_id = loop.current_session_id, current_session_id = null, restart_count = 0, updated_at = now()
    from loop where c.id = loop.id
    returning c.id, loop.current_session_id as session_id`);
  // Already suspended, but the user went on in a fresh session that restarts now
  // cut off again: that session is set aside the same way (the original stays parked for operators).
  const again = await db.execute<{ id: string; session_id: string | null }>(sql`
    with loop as (
      select c.id, c.current_session_id from conversations c
      where c.status = 'suspended' and c.restart_count >= ${threshold} and c.current_session_id is not null
        and not exists (select 1 from turns t where t.conversation_id = c.id and t.status = 'running')
      order by c.id limit 500
      for update skip locked
    ), finalized as (
      update sessions set status = 'finalized', end_reason = 'restart_loop', ended_at = now()
      from loop where sessions.id = loop.current_session_id and sessions.status = 'active'
    ), held as (
      update inbound_events set status = 'held' from loop where inbound_events.conversation_id = loop.id and inbound_events.status = 'pending'
    )
    update conversations c set current_session_id = null, restart_count = 0, suspended_at = now(), updated_at = now()
    from loop where c.id = loop.id
    returning c.id, loop.current_session_id as session_id`);
  return [...fresh, ...again].map((row) => ({ conversationId: Number(row.id), sessionId: row.session_id === null ? null : Number(row.session_id) }));
}

/** Operator resume of a restart-loop suspension: the held input runs again, in order. */
export async function releaseHeldInput(db: Database, conversationId: number): Promise<number> {
  const rows = await db.execute(sql`update inbound_events set status = 'pending' where conversation_id = ${conversationId} and status = 'held' returning id`);
  return rows.length;
}
