import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDiscordMessage, waitForDiscordGateway, waitForDiscordMessages } from '../support/discord.ts';
import { TestSystem } from '../support/system.ts';

// Issue 17 defect 2: text Postgres cannot store must never block a platform's inbound stream.
describe('Text that Postgres cannot store', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ slack: true, discord: true });
    await waitForDiscordGateway(system.simUrl, { identifies: 1, connected: true });
  });
  afterAll(async () => {
    await system?.close();
  });

  const storedTexts = async (platform: string, chatId: string) =>
    (
      await system.sql<{ text: string }[]>`
        select e.text from inbound_events e join conversations c on c.id = e.conversation_id
        where c.platform = ${platform} and c.chat_id = ${chatId} order by e.id`
    ).map((row) => row.text);

  it('Telegram: a message with U+0000 is answered without the NUL, and so is the next one', async () => {
    const first = await system.sendTelegram({ chatId: 1701, text: 'hel\u0000lo' });
    expect(first.status).toBe(200);
    // One at a time: input that arrives together is answered in one turn.
    expect((await system.waitForTelegram(1701, 1))[0]?.text).toBe('echo: hello');
    const second = await system.sendTelegram({ chatId: 1701, text: 'and again' });
    expect(second.status).toBe(200);
    const replies = await system.waitForTelegram(1701, 2);
    expect(replies.map((r) => r.text)).toEqual(['echo: hello', 'echo: and again']);
    expect(await storedTexts('telegram', '1701')).toEqual(['hello', 'and again']);
  });

  it('Telegram: a model reply and a tool result holding U+0000 are committed and sent without it; nothing is counted as a restart', async () => {
    await system.setModelScript({
      default: { type: 'echo', prefix: 'echo: ' },
      rules: [
        { match: 'nul reply', reply: 'bro\u0000ken' },
        { match: 'nul tool', toolCalls: [{ name: 'calculator', arguments: { expression: '1+\u00001' } }], times: 1 },
      ],
    });
    await system.sendTelegram({ chatId: 1704, text: 'nul reply' });
    expect((await system.waitForTelegram(1704, 1))[0]?.text).toBe('broken');
    await system.sendTelegram({ chatId: 1704, text: 'nul tool' });
    const replies = await system.waitForTelegram(1704, 2);
    expect(replies[1]?.text).toBe('echo: nul tool');
    const stored = await system.sql<{ content: string }[]>`
      select m.content from messages m join sessions s on s.id = m.session_id join conversations c on c.id = s.conversation_id
      where c.chat_id = '1704' order by m.id`;
    expect(stored.map((m) => m.content).join('')).not.toContain('\u0000');
    const [conversation] = await system.sql<{ restart_count: number }[]>`select restart_count from conversations where chat_id = '1704'`;
    expect(conversation?.restart_count).toBe(0);
    await system.setModelScript({ default: { type: 'echo', prefix: 'echo: ' } });
  });

  it('Slack: a channel id holding a lone surrogate is not a 5xx, and the next event is answered', async () => {
    const odd = await system.sendSlack({ channel: 'D17\uD800', user: 'U1701', text: 'odd channel', retryOnFailure: false });
    expect(odd.status).toBeGreaterThanOrEqual(200);
    expect(odd.status).toBeLessThan(500);
    expect(odd.attempts).toHaveLength(1);
    const next = await system.sendSlack({ channel: 'D1702', user: 'U1701', text: 'next event' });
    expect(next.status).toBe(200);
    const [reply] = await system.waitForSlack('D1702', 1);
    expect(reply?.text).toBe('echo: next event');
    // Stored under the replaced id, so the same channel keeps one conversation.
    expect(await storedTexts('slack', 'D17\uFFFD')).toEqual(['odd channel']);
  });

  it('Slack: an event Postgres refuses for its size is acknowledged with 200, counted, and never retried', async () => {
    // An event id far past a btree entry's limit: SQLSTATE 54000, a permanent data error, not an outage.
    const eventId = `Ev${randomBytes(6000).toString('base64')}`;
    const refused = await system.sendSlack({ channel: 'D1703', user: 'U1703', text: 'unstorable', event_id: eventId });
    expect(refused.status).toBe(200);
    expect(refused.attempts).toHaveLength(1);
    expect(refused.body).toMatchObject({ ok: true, outcome: 'invalid_input' });
    expect(await storedTexts('slack', 'D1703')).toEqual([]);
    const metrics = await (await fetch(`${system.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/switchboard_inbound_rejected_total\{platform="slack",reason="program_limit"\} 1/);
    const next = await system.sendSlack({ channel: 'D1703', user: 'U1703', text: 'storable' });
    expect(next.status).toBe(200);
    expect((await system.waitForSlack('D1703', 1)).map((m) => m.text)).toEqual(['echo: storable']);
  });

  it('Discord Gateway: a message with U+0000 does not block the next one', async () => {
    const channelId = '5000000000000001701';
    await sendDiscordMessage(system.simUrl, { channelId, content: 'nul\u0000here' });
    expect((await waitForDiscordMessages(system.simUrl, channelId, 1))[0]?.content).toBe('echo: nulhere');
    await sendDiscordMessage(system.simUrl, { channelId, content: 'after it' });
    const replies = await waitForDiscordMessages(system.simUrl, channelId, 2);
    expect(replies.map((r) => r.content)).toEqual(['echo: nulhere', 'echo: after it']);
    expect(await storedTexts('discord', channelId)).toEqual(['nulhere', 'after it']);
  });
});
