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
  return suspended;
}

/** Operator resume of a restart-loop suspension: the held input runs again, in order. */
export async function releaseHeldInput(db: Database, conversationId: number): Promise<number> {
  const rows = await db.execute(sql`update inbound_events set status = 'pending' where conversation_id = ${conversationId} and status = 'held' returning id`);
  return rows.length;
}
