import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, TestSystem, webhookSecret } from '../support/system.ts';
import { waitForRequestFor } from '../support/turn-helpers.ts';

describe('Telegram message end to end', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start();
  });
  afterAll(async () => {
    await system?.close();
  });

  it('answers a private message and keeps the transcript', async () => {
    const { status } = await system.sendTelegram({ chatId: 501, text: 'Hello, Switchboard!' });
    expect(status).toBe(200);
    const [reply] = await system.waitForTelegram(501, 1);
    expect(reply?.text).toBe('echo: Hello, Switchboard!');
    const rows = await system.sql<{ role: string; content: string; seq: number }[]>`
      select m.role, m.content, m.seq from messages m
      join conversations c on c.current_session_id = m.session_id
      where c.chat_id = '501' order by m.seq`;
    expect(rows.map((r) => [r.role, r.content])).toEqual([
      ['user', 'Hello, Switchboard!'],
      ['assistant', 'echo: Hello, Switchboard!'],
    ]);
    const [outbox] = await system.sql<{ status: string; platform_message_id: string }[]>`select status, platform_message_id from outbox`;
    expect(outbox).toEqual({ status: 'sent', platform_message_id: String(reply?.message_id) });
  });

  it('answers the same update delivered twice only once', async () => {
    const first = await system.sendTelegram({ chatId: 502, text: 'only once please' });
    const again = await system.sendTelegram({ chatId: 502, text: 'only once please', updateId: first.updateId });
    expect([first.status, again.status]).toEqual([200, 200]);
    await system.waitForTelegram(502, 1);
    await system.sendTelegram({ chatId: 502, text: 'second message' });
    // Replies arrive in order per conversation: a second turn for the duplicate would sit between these two.
    const replies = await system.waitForTelegram(502, 2);
    expect(replies.map((r) => r.text)).toEqual(['echo: only once please', 'echo: second message']);
    const [count] = await system.sql<{ n: number }[]>`
      select count(*)::int as n from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = '502'`;
    expect(count?.n).toBe(2);
  });

  it('rejects a bad secret with 401 and stores nothing', async () => {
    const before = await system.sql<{ n: number }[]>`select count(*)::int as n from inbound_events`;
    const { status } = await system.sendTelegram({ chatId: 503, text: 'forged', secretToken: 'wrong-secret' });
    expect(status).toBe(401);
    const after = await system.sql<{ n: number }[]>`select count(*)::int as n from inbound_events`;
    expect(after[0]?.n).toBe(before[0]?.n);
    const conversations = await system.sql`select 1 from conversations where chat_id = '503'`;
    expect(conversations).toHaveLength(0);
  });

  it('answers malformed JSON with 400 and an unknown payload with 400, storing nothing', async () => {
    const url = `${system.gateway.url}/webhooks/telegram`;
    const headers = { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': webhookSecret };
    const malformed = await fetch(url, { method: 'POST', headers, body: '{"update_id": 1, "message": ' });
    expect(malformed.status).toBe(400);
    const unknown = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ hello: 'world' }) });
    expect(unknown.status).toBe(400);
    const oversized = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ update_id: 1, pad: 'x'.repeat(1_100_000) }) });
    expect(oversized.status).toBe(413);
    const health = await fetch(`${system.gateway.url}/healthz`);
    expect(health.status).toBe(200);
  });

  it('delivers a 5,000-character reply as two Telegram messages in order', async () => {
    await system.setModelScript({ rules: [{ match: 'long answer', replyRepeat: { text: 'lorem ipsum dolor sit amet ', count: 186 } }] });
    await system.sendTelegram({ chatId: 504, text: 'give me a long answer' });
    const parts = await system.waitForTelegram(504, 2);
    expect(parts).toHaveLength(2);
    for (const part of parts) expect(part.text.length).toBeLessThanOrEqual(4096);
    expect(parts[0]!.message_id).toBeLessThan(parts[1]!.message_id);
    const whole = 'lorem ipsum dolor sit amet '.repeat(186).trim();
    expect(parts.map((p) => p.text).join(' ').trimEnd()).toBe(whole);
    await system.setModelScript({});
  });

  it('answers a long paste split by the client into parts once, with every part', async () => {
    const first = 'a'.repeat(4000);
    await system.sendTelegram({ chatId: 505, text: first });
    await system.sendTelegram({ chatId: 505, text: 'end of paste' });
    await system.sendTelegram({ chatId: 505, text: '/status' });
    // The /status reply comes after the paste's answer: had the paste been answered twice, two replies would precede it.
    const replies = await system.waitForTelegram(505, 2);
    expect(replies[0]?.text).toBe('echo: end of paste');
    expect(replies[1]?.text).toMatch(/^Session \d+: 3 messages/);
    const requests = (await (await fetch(`${system.simUrl}/control/model/requests`)).json()) as { body: { messages: { role: string; content: string }[] } }[];
    const request = requests.find((r) => r.body.messages.some((m) => m.content === 'end of paste'));
    expect(request?.body.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([first, 'end of paste']);
  });

  it('formats replies as Telegram HTML', async () => {
    await system.setModelScript({ rules: [{ match: 'formatted', reply: 'Use `a < b` and **care**.' }] });
    await system.sendTelegram({ chatId: 506, text: 'formatted please' });
    const [formatted] = await system.waitForTelegram(506, 1);
    const sent = (await (await fetch(`${system.simUrl}/control/telegram/sent?chat_id=506`)).json()) as { text: string; rawText?: string; parse_mode?: string }[];
    expect(sent[0]).toMatchObject({ parse_mode: 'HTML', rawText: 'Use <code>a &lt; b</code> and <b>care</b>.' });
    expect(formatted?.text).toBe('Use a < b and care.');
    await system.setModelScript({});
  });

  it('sends the same words as plain text, once, when Telegram refuses the formatting', async () => {
    await system.setModelScript({ rules: [{ match: 'refused please', reply: 'Use `a < b` and **care**.' }] });
    await postJson(`${system.simUrl}/control/telegram/faults`, { method: 'sendMessage', kind: 'refuse-markup', times: 1 });
    await system.sendTelegram({ chatId: 507, text: 'refused please' });
    const [shown] = await system.waitForTelegram(507, 1);
    expect(shown?.text).toBe('Use `a < b` and **care**.');
    const sent = (await (await fetch(`${system.simUrl}/control/telegram/sent?chat_id=507`)).json()) as { parse_mode?: string }[];
    expect(sent).toHaveLength(1);
    expect(sent[0]?.parse_mode).toBeUndefined();
    await system.setModelScript({});
  });

  it('waits out a 429 from Telegram and then delivers the reply exactly once', async () => {
    await fetch(`${system.simUrl}/control/telegram/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'sendMessage', kind: '429', times: 1, retryAfter: 1 }),
    });
    const started = Date.now();
    await system.sendTelegram({ chatId: 508, text: 'rate limited hello' });
    const [reply] = await system.waitForTelegram(508, 1);
    expect(reply?.text).toBe('echo: rate limited hello');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    await system.sendTelegram({ chatId: 508, text: 'and after' });
    expect((await system.waitForTelegram(508, 2)).map((m) => m.text)).toEqual(['echo: rate limited hello', 'echo: and after']);
  });

  it('answers /help with the command list and /new with a fresh session', async () => {
    await system.sendTelegram({ chatId: 509, text: 'remember me' });
    await system.waitForTelegram(509, 1);
    const [before] = await system.sql<{ current_session_id: string }[]>`select current_session_id from conversations where chat_id = '509'`;
    await system.sendTelegram({ chatId: 509, text: '/help' });
    await system.sendTelegram({ chatId: 509, text: '/new' });
    const replies = await system.waitForTelegram(509, 3);
    expect(replies[1]?.text).toMatch(/\/new or \/reset.*\n.*\/stop/s);
    expect(replies[2]?.text).toMatch(/fresh session/);
    const [after] = await system.sql<{ current_session_id: string }[]>`select current_session_id from conversations where chat_id = '509'`;
    expect(after?.current_session_id).not.toBe(before?.current_session_id);
    const [old] = await system.sql<{ status: string; end_reason: string }[]>`select status, end_reason from sessions where id = ${before?.current_session_id ?? 0}`;
    expect(old).toEqual({ status: 'finalized', end_reason: 'new' });
  });

  it('in a group, leaves a command addressed to another bot alone: /stop@other_bot neither stops the running turn nor is stored', async () => {
    const chatId = -9510;
    const fromId = 9510;
    const question = '@switchboard_sim_bot take your time';
    await system.setModelScript({ rules: [{ match: 'take your time', delayMs: 1500 }] });
    try {
      await system.sendTelegram({ chatId, fromId, chatType: 'supergroup', text: question });
      await waitForRequestFor(system, question, 'any');
      // While the turn runs: another bot's /stop (a group with privacy mode off delivers every bot's commands).
      expect((await system.sendTelegram({ chatId, fromId, chatType: 'supergroup', text: '/stop@other_bot' })).status).toBe(200);
      const [reply] = await system.waitForTelegram(chatId, 1);
      expect(reply?.text).toBe(`echo: ${question}`);
    } finally {
      await system.setModelScript({});
    }
    const stored = await system.sql<{ text: string }[]>`
      select e.text from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = ${String(chatId)} order by e.id`;
    expect(stored.map((e) => e.text)).toEqual([question]);
    // Addressed to this bot, the same command is ours.
    await system.sendTelegram({ chatId, fromId, chatType: 'supergroup', text: '/stop@switchboard_sim_bot' });
    expect((await system.waitForTelegram(chatId, 2))[1]?.text).toBe('Nothing was running.');
  });

  it('reports readiness of Postgres and Redis', async () => {
    const ready = await fetch(`${system.gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, checks: { postgres: true, redis: true } });
  });

  it('reports how long each new message waited for a worker, once per message', async () => {
    const worker = system.workers[0] as { url: string };
    const wakeDelays = async () => {
      const metrics = await (await fetch(`${worker.url}/metrics`)).text();
      const value = (prefix: string) => Number(metrics.split('\n').find((l) => l.startsWith(prefix))?.split(' ').at(-1) ?? 0);
      return { count: value('switchboard_wake_delay_seconds_count'), within5s: value('switchboard_wake_delay_seconds_bucket{le="5"}') };
    };
    const before = await wakeDelays();
    const first = await system.sendTelegram({ chatId: 511, text: 'how long did I wait?' });
    // Telegram re-delivering the same update is no new message: no second wake-up, no second sample.
    await system.sendTelegram({ chatId: 511, text: 'how long did I wait?', updateId: first.updateId });
    await system.waitForTelegram(511, 1);
    await system.sendTelegram({ chatId: 511, text: 'and now?' });
    await system.waitForTelegram(511, 2);
    const after = await wakeDelays();
    expect(after.count - before.count).toBe(2);
    expect(after.within5s - before.within5s).toBe(2);
  });
});
