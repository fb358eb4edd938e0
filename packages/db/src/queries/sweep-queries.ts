import type { Database } from '../client.ts';

/**
 * Conversations holding input that no turn has taken for a while: the
 * candidates for the recovery sweep (a lost wake-up, a Redis restart).
 * The grace period keeps the sweep from racing the normal path.
 */
export async function findStrandedConversations(db: Database, olderThanMs: number, limit: number): Promise<{ conversationId: number; firstEventId: number }[]> {
  const rows = await db.$client<{ conversation_id: string; first_id: string }[]>`
    select conversation_id, min(id) as first_id
    from inbound_events
    where status = 'pending' and received_at < now() - ${`${olderThanMs} milliseconds`}::interval
    group by conversation_id
    limit ${limit}`;
  return rows.map((r) => ({ conversationId: Number(r.conversation_id), firstEventId: Number(r.first_id) }));
}
