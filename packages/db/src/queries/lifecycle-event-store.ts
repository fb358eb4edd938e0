import { sql } from 'drizzle-orm';
import { sessionClientOf, type Database } from '../client.ts';
import { AdvisoryLock } from '../lock-ids.ts';

export interface RecordedEvent {
  id: number;
  conversationId: number;
  type: string;
  payload: Record<string, unknown>;
}

/**
 * Records an event and one pending delivery per webhook URL, in one
 * statement, so delivery survives any restart after this returns.
 */
export async function recordLifecycleEvent(db: Database, event: { conversationId: number; type: string; payload: Record<string, unknown> }, urls: readonly string[]): Promise<number> {
  const [row] = await db.execute<{ id: string }>(sql`
    with e as (
      insert into lifecycle_events (conversation_id, type, payload)
      values (${event.conversationId}, ${event.type}, ${JSON.stringify(event.payload)}::jsonb)
      returning id, conversation_id
    ), d as (
      insert into event_deliveries (event_id, conversation_id, url)
      select e.id, e.conversation_id, u.url from e, unnest(${`{${urls.map((u) => JSON.stringify(u)).join(',')}}`}::text[]) as u(url)
    )
    select id from e`);
  return Number(row?.id);
}

export interface DueDelivery {
  id: number;
  url: string;
  attempts: number;
  event: RecordedEvent;
}

/**
 * The oldest pending delivery of each (url, conversation) queue, if due:
 * events go out in order per conversation, and a failing one holds back the
 * ones after it until it is sent or given up.
 */
export async function loadDueDeliveries(db: Database, limit: number): Promise<DueDelivery[]> {
  const rows = await db.execute<{ id: string; url: string; attempts: number; next_attempt_at: Date; event_id: string; conversation_id: string; type: string; payload: Record<string, unknown> }>(sql`
    select h.id, h.url, h.attempts, h.next_attempt_at, e.id as event_id, e.conversation_id, e.type, e.payload
    from (
      select distinct on (url, conversation_id) id, url, attempts, next_attempt_at, event_id
      from event_deliveries where status = 'pending'
      order by url, conversation_id, id
    ) h join lifecycle_events e on e.id = h.event_id
    where h.next_attempt_at <= now()
    order by h.id
    limit ${limit}`);
  return rows.map((r) => ({
    id: Number(r.id),
    url: r.url,
    attempts: r.attempts,
    event: { id: Number(r.event_id), conversationId: Number(r.conversation_id), type: r.type, payload: r.payload },
  }));
}

export async function markDeliverySent(db: Database, id: number): Promise<void> {
  await db.execute(sql`update event_deliveries set status = 'sent', sent_at = now(), attempts = attempts + 1 where id = ${id}`);
}

export async function markDeliveryFailed(db: Database, id: number, error: string, retryInMs: number | null): Promise<void> {
  await db.execute(sql`
    update event_deliveries set attempts = attempts + 1, last_error = ${error},
      status = case when ${retryInMs}::int is null then 'failed' else 'pending' end,
      next_attempt_at = now() + coalesce(${retryInMs}::int, 0) * interval '1 millisecond'
    where id = ${id}`);
}

export interface EventDeliveryLock {
  release(): Promise<void>;
}

/**
 * The lock that lets one worker deliver lifecycle events at a time:
 * `pg_try_advisory_lock` on a connection reserved for it, so if the holder
 * dies its connection closes and another worker takes over at its next tick.
 * Undefined while another worker holds it.
 */
export async function tryLockEventDelivery(db: Database): Promise<EventDeliveryLock | undefined> {
  const reserved = await sessionClientOf(db).reserve();
  try {
    const [row] = await reserved<{ locked: boolean }[]>`select pg_try_advisory_lock(${AdvisoryLock.EventDelivery}) as locked`;
    if (!row?.locked) {
      reserved.release();
      return undefined;
    }
  } catch (error) {
    reserved.release();
    throw error;
  }
  return {
    async release() {
      // Releasing the connection ends the lock with its session if the unlock fails.
      await reserved`select pg_advisory_unlock(${AdvisoryLock.EventDelivery})`.catch(() => undefined);
      reserved.release();
    },
  };
}
