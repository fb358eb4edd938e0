import type { Database } from '../client.ts';

/**
 * Where Telegram long polling resumes: the update after the newest one
 * stored for this bot. The stored events are the offset (no separate
 * cursor to keep in step), so an update is moved past only once it is
 * stored. Undefined when none is stored: Telegram then starts at the oldest
 * update it still keeps.
 */
export async function loadTelegramPollOffset(db: Database, botId: string): Promise<number | undefined> {
  const [row] = await db.$client<{ last: string | null }[]>`
    select max(event_id::bigint) as last from inbound_events where platform = 'telegram' and account_id = ${botId}`;
  return row?.last ? Number(row.last) + 1 : undefined;
}
