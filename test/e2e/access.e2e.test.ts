import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSystem } from '../support/system.ts';

describe('access: allowlists and the per-user rate limit', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({
      gatewayEnv: { DM_POLICY: 'allowlist', TELEGRAM_ALLOWED_USERS: '801,803', USER_RATE_LIMIT_PER_MINUTE: '3' },
      workerEnv: { BUSY_INPUT_MODE: 'queue' },
    });
  });
  afterAll(async () => {
    await system?.close();
  });

  const storedFrom = async (chatId: number) => {
    const [row] = await system.sql<{ n: number }[]>`
      select count(*)::int as n from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = ${String(chatId)}`;
    return row?.n ?? 0;
  };

  it('answers an allowlisted user and refuses anyone else once, without a turn', async () => {
    await system.sendTelegram({ chatId: 801, text: 'hello from a friend' });
    expect((await system.waitForTelegram(801, 1)).map((m) => m.text)).toEqual(['echo: hello from a friend']);

    expect((await system.sendTelegram({ chatId: 802, text: 'let me in' })).status).toBe(200);
    await system.sendTelegram({ chatId: 802, text: 'please?' });
    const refusals = await system.waitForTelegram(802, 1);
    expect(refusals[0]?.text).toMatch(/not available to you/);
    expect(await storedFrom(802)).toBe(0);
    const [turns] = await system.sql<{ n: number }[]>`select count(*)::int as n from turns t join conversations c on c.id = t.conversation_id where c.chat_id = '802'`;
    expect(turns?.n).toBe(0);
    // Told once: the second refused message added no second notice. An allowed chat proves the system moved on meanwhile.
    await system.sendTelegram({ chatId: 801, text: 'still here' });
    await system.waitForTelegram(801, 2);
    const sent = (await (await fetch(`${system.simUrl}/control/telegram/sent?chat_id=802`)).json()) as unknown[];
    expect(sent).toHaveLength(1);
  });

  it('asks a user who sends too fast to slow down, once, and keeps what came within the limit', async () => {
    for (let i = 0; i < 5; i++) await system.sendTelegram({ chatId: 803, text: `quick ${i}` });
    expect(await storedFrom(803)).toBe(3);
    const messages = await system.waitForTelegram(803, 4);
    const texts = messages.map((m) => m.text);
    expect(texts.filter((t) => /faster than I can answer/.test(t))).toHaveLength(1);
    expect(texts.filter((t) => t.startsWith('echo: '))).toEqual(['echo: quick 0', 'echo: quick 1', 'echo: quick 2']);
  });
});
