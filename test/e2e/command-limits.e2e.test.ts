import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSystem } from '../support/system.ts';

// Issue 17, defect 4: only /stop skips the rate limit; an unknown /word is text for the model.
describe('commands and the per-user rate limit', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { USER_RATE_LIMIT_PER_MINUTE: '3' }, workerEnv: { BUSY_INPUT_MODE: 'queue' } });
  });
  afterAll(async () => {
    await system?.close();
  });

  const storedTexts = async (chatId: number) =>
    (
      await system.sql<{ text: string }[]>`
        select e.text from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = ${String(chatId)} order by e.id`
    ).map((r) => r.text);

  it('answers an unknown /word through the model, as ordinary text', async () => {
    await system.sendTelegram({ chatId: 901, text: '/frobnicate the widget' });
    expect((await system.waitForTelegram(901, 1)).map((m) => m.text)).toEqual(['echo: /frobnicate the widget']);
  });

  it('counts known commands and unknown /words against the limit, but never /stop', async () => {
    for (const text of ['/help', '/status', '/frobnicate', '/help', '/frobnicate again']) await system.sendTelegram({ chatId: 902, text });
    // Three got through (the third is a turn for the model), two were refused with one notice.
    const before = (await system.waitForTelegram(902, 4)).map((m) => m.text);
    expect(before.filter((t) => /faster than I can answer/.test(t))).toHaveLength(1);
    expect(before).toContain('echo: /frobnicate');
    expect(before.filter((t) => /^Commands:/.test(t))).toHaveLength(1);
    // Over the limit, /stop still gets through (after the turn ended, so there is nothing to stop).
    await system.sendTelegram({ chatId: 902, text: '/stop' });
    expect((await system.waitForTelegram(902, 5)).map((m) => m.text)[4]).toBe('Nothing was running.');
    expect(await storedTexts(902)).toEqual(['/help', '/status', '/frobnicate', '/stop']);
  });
});
