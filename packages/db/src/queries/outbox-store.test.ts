import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { markOutboxSent, queueNoticeForAddress } from './outbox-store.ts';

const db = useTestDbClient();

/** A conversation cut off twice by restarts, with one outbox row of each kind. */
async function conversationWithRows(chatId: string) {
  const sql = db.client.db.$client;
  const conversationId = await queueNoticeForAddress(db.client.db, {
    conversationKey: `telegram:bot:${chatId}::`,
    platform: 'telegram',
    accountId: 'bot',
    chatId,
    threadId: '',
    userScope: '',
    target: { chat_id: Number(chatId) },
    text: 'You are sending messages faster than I can read them.',
  });
  await sql`update conversations set restart_count = 2 where id = ${conversationId}`;
  const turn = async (status: string) => Number((await sql<{ id: string }[]>`insert into turns (conversation_id, session_id, status) values (${conversationId}, 0, ${status}) returning id`)[0]?.id);
  const row = async (turnId: number | null, text: string) =>
    Number((await sql<{ id: string }[]>`insert into outbox (conversation_id, turn_id, platform, target, text) values (${conversationId}, ${turnId}, 'telegram', '{}'::jsonb, ${text}) returning id`)[0]?.id);
  const [notice] = await sql<{ id: string }[]>`select id from outbox where conversation_id = ${conversationId}`;
  return {
    conversationId,
    notice: Number(notice?.id),
    commandReply: await row(null, 'Busy mode is now queue.'),
    failureNotice: await row(await turn('failed'), 'Something went wrong; please try again.'),
    cancelledNotice: await row(await turn('cancelled'), 'Stopped.'),
    reply: await row(await turn('completed'), 'the answer'),
  };
}

const restartCount = async (conversationId: number) => (await db.client.db.$client<{ n: number }[]>`select restart_count as n from conversations where id = ${conversationId}`)[0]?.n;

describe('markOutboxSent', () => {
  it("clears the restart counter only for a completed turn's reply, not for notices or command replies", async () => {
    const rows = await conversationWithRows('501');
    for (const id of [rows.notice, rows.commandReply, rows.failureNotice, rows.cancelledNotice]) {
      await markOutboxSent(db.client.db, id, `m${id}`);
      expect(await restartCount(rows.conversationId), `after outbox row ${id}`).toBe(2);
    }
    await markOutboxSent(db.client.db, rows.reply, 'm-reply');
    expect(await restartCount(rows.conversationId)).toBe(0);
    const sent = await db.client.db.$client<{ status: string; platform_message_id: string }[]>`
      select status, platform_message_id from outbox where conversation_id = ${rows.conversationId} order by id`;
    expect(sent.every((r) => r.status === 'sent')).toBe(true);
    expect(sent.at(-1)?.platform_message_id).toBe('m-reply');
  });
});
