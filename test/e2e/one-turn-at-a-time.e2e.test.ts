import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSystem } from '../support/system.ts';

describe('one running turn per conversation across two worker processes', () => {
  let system: TestSystem;

  beforeAll(async () => {
    // Queue mode: every message gets its own turn, so turns of one conversation follow each other closely.
    system = await TestSystem.start({ workers: 2, workerProcesses: true, workerEnv: { BUSY_INPUT_MODE: 'queue' } });
    // Slow enough that messages arrive while turns run.
    await system.setModelScript({ delayMs: 40 });
  }, 90_000);
  afterAll(async () => {
    await system?.close();
  });

  it('stores every message once, in order, and never runs two turns of one conversation at once', async () => {
    const chats = [701, 702, 703];
    const perChat = 6;
    await Promise.all(
      chats.map(async (chatId) => {
        for (let i = 0; i < perChat; i++) {
          const { status } = await system.sendTelegram({ chatId, text: `chat ${chatId} message ${i}` });
          expect(status).toBe(200);
        }
      }),
    );
    for (const chatId of chats) {
      const replies = await system.waitForTelegram(chatId, perChat);
      expect(replies.map((r) => r.text)).toEqual(Array.from({ length: perChat }, (_, i) => `echo: chat ${chatId} message ${i}`));
    }

    for (const chatId of chats) {
      const users = await system.sql<{ content: string }[]>`
        select m.content from messages m join sessions s on s.id = m.session_id join conversations c on c.id = s.conversation_id
        where c.chat_id = ${String(chatId)} and m.role = 'user' order by m.seq`;
      expect(users.map((u) => u.content)).toEqual(Array.from({ length: perChat }, (_, i) => `chat ${chatId} message ${i}`));

      const turns = await system.sql<{ started_at: Date; ended_at: Date; status: string }[]>`
        select t.started_at, t.ended_at, t.status from turns t join conversations c on c.id = t.conversation_id
        where c.chat_id = ${String(chatId)} order by t.started_at`;
      for (const turn of turns) expect(turn.status).toBe('completed');
      for (let i = 1; i < turns.length; i++) {
        expect(turns[i]!.started_at.getTime()).toBeGreaterThanOrEqual(turns[i - 1]!.ended_at.getTime());
      }
    }
    const [pending] = await system.sql<{ n: number }[]>`select count(*)::int as n from inbound_events where status = 'pending'`;
    expect(pending?.n).toBe(0);
  });
});
