import { sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { suspendConversation } from './suspension-store.ts';

/**
 * Conversations cut off by restarts `threshold` times in a row are suspended
 * instead of resumed (DESIGN §9): reason `restart_loop`, counter cleared, and
 * the input of the cut-off turn is held back (status `held`) so it is not
 * resumed behind the user's back; an operator's resume releases it.
 */
export async function suspendRestartLoops(db: Database, threshold: number): Promise<{ conversationId: number; sessionId: number | null }[]> {
  const candidates = await db.execute<{ id: string }>(sql`
    select id from conversations where status = 'active' and restart_count >= ${threshold} order by id limit 500`);
  const suspended: { conversationId: number; sessionId: number | null }[] = [];
  for (const candidate of candidates) {
    const conversationId = Number(candidate.id);
    const result = await suspendConversation(db, conversationId, 'restart_loop');
    if (result.kind !== 'suspended') continue;
    await db.execute(sql`update inbound_events set status = 'held' where conversation_id = ${conversationId} and status = 'pending'`);
    suspended.push({ conversationId, sessionId: result.preSuspendSessionId });
  }
  // Already suspended, but the user went on in a fresh session that restarts now
  // cut off again: that session is set aside the same way (the original stays parked for operators).
  const again = await db.execute<{ id: string; session_id: string | null }>(sql`
    with loop as (
      select id, current_session_id from conversations
      where status = 'suspended' and restart_count >= ${threshold} and current_session_id is not null
      order by id limit 500
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
  for (const row of again) suspended.push({ conversationId: Number(row.id), sessionId: row.session_id === null ? null : Number(row.session_id) });
  return suspended;
}

/** Operator resume of a restart-loop suspension: the held input runs again, in order. */
export async function releaseHeldInput(db: Database, conversationId: number): Promise<number> {
  const rows = await db.execute(sql`update inbound_events set status = 'pending' where conversation_id = ${conversationId} and status = 'held' returning id`);
  return rows.length;
}
