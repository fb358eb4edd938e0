import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signSlackBody } from '../support/slack.ts';
import { postJson, TestSystem } from '../support/system.ts';

// The simulated workspace's bot (apps/sim slackWorkspace): what auth.test answers.
const botUserId = 'U0SIMBOT';
const botId = 'B0SIMBOT';

describe('Slack end to end', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ slack: true });
  });
  afterAll(async () => {
    await system?.close();
  });

  const countInbound = async (chatId?: string) => {
    const rows =
      chatId === undefined
        ? await system.sql<{ n: number }[]>`select count(*)::int as n from inbound_events`
        : await system.sql<{ n: number }[]>`
            select count(*)::int as n from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = ${chatId}`;
    return rows[0]?.n ?? 0;
  };
  const conversationsIn = (chatId: string) =>
    system.sql<{ id: number; thread_id: string; user_scope: string; account_id: string }[]>`
      select id::int, thread_id, user_scope, account_id from conversations where platform = 'slack' and chat_id = ${chatId} order by id`;

  const outboxIn = (chatId: string) =>
    system.sql<{ status: string; platform_message_id: string }[]>`
      select o.status, o.platform_message_id from outbox o join conversations c on c.id = o.conversation_id where c.chat_id = ${chatId} order by o.id`.then((rows) => [...rows]);
  const pollOptions = { timeout: 10_000, interval: 20 };

  it('answers a DM in the DM, unthreaded, and keeps the transcript', async () => {
    const sent = await system.sendSlack({ channel: 'D100', user: 'U100', text: 'Hello, Switchboard!' });
    expect(sent.status).toBe(200);
    expect(sent.attempts).toHaveLength(1);
    const [reply] = await system.waitForSlack('D100', 1);
    expect(reply).toMatchObject({ channel: 'D100', text: 'echo: Hello, Switchboard!' });
    expect(reply?.thread_ts).toBeUndefined();

    expect(await conversationsIn('D100')).toEqual([{ id: expect.any(Number), thread_id: '', user_scope: '', account_id: 'T0SIM' }]);
    const rows = await system.sql<{ role: string; content: string }[]>`
      select m.role, m.content from messages m join conversations c on c.current_session_id = m.session_id
      where c.chat_id = 'D100' order by m.seq`;
    expect(rows.map((r) => [r.role, r.content])).toEqual([
      ['user', 'Hello, Switchboard!'],
      ['assistant', 'echo: Hello, Switchboard!'],
    ]);
    const [event] = await system.sql<{ event_id: string; user_id: string }[]>`select event_id, user_id from inbound_events where event_id = ${sent.eventId}`;
    expect(event).toEqual({ event_id: sent.eventId, user_id: 'U100' });
    // The row is marked sent just after Slack answered, so the sim can record the reply first.
    await expect.poll(() => outboxIn('D100'), pollOptions).toEqual([{ status: 'sent', platform_message_id: reply?.ts }]);
  });

  it('answers a channel mention in a thread under the mention', async () => {
    const mention = await system.sendSlack({ channel: 'C200', user: 'U200', text: `<@${botUserId}> what is new?` });
    expect(mention.status).toBe(200);
    const [reply] = await system.waitForSlack('C200', 1);
    expect(reply).toMatchObject({ channel: 'C200', thread_ts: mention.ts, text: `echo: &lt;@${botUserId}&gt; what is new?` }); // escaped: a model reply pings no one
    expect(await conversationsIn('C200')).toEqual([{ id: expect.any(Number), thread_id: mention.ts, user_scope: 'U200', account_id: 'T0SIM' }]);
  });

  it('keeps a reply inside a thread in that thread and in the thread’s conversation', async () => {
    const top = await system.sendSlack({ channel: 'C201', user: 'U201', text: `<@${botUserId}> first` });
    await system.waitForSlack('C201', 1);
    const inThread = await system.sendSlack({ channel: 'C201', user: 'U201', text: `<@${botUserId}> second`, thread_ts: top.ts });
    expect(inThread.status).toBe(200);
    const replies = await system.waitForSlack('C201', 2);
    expect(replies.map((r) => [r.thread_ts, r.text])).toEqual([
      [top.ts, `echo: &lt;@${botUserId}&gt; first`],
      [top.ts, `echo: &lt;@${botUserId}&gt; second`],
    ]);
    const conversations = await conversationsIn('C201');
    expect(conversations).toHaveLength(1);
    const rows = await system.sql<{ role: string; content: string }[]>`
      select m.role, m.content from messages m join conversations c on c.current_session_id = m.session_id
      where c.id = ${conversations[0]!.id} order by m.seq`;
    expect(rows.map((r) => r.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('ignores the bot’s own messages and other bots’ messages, storing nothing', async () => {
    const own = await system.sendSlack({ type: 'message', channel: 'D300', user: botUserId, bot_id: botId, text: 'echo: my own reply' });
    const ownWithoutBotId = await system.sendSlack({ type: 'message', channel: 'D300', user: botUserId, text: 'me again' });
    const otherBot = await system.sendSlack({ type: 'message', channel: 'D300', user: 'U0OTHERBOT', bot_id: 'B0OTHER', text: 'beep' });
    const botMessage = await system.sendSlack({ type: 'message', channel: 'D300', user: 'legacy-bot', bot_id: 'B0LEGACY', subtype: 'bot_message', text: 'boop' });
    expect([own, ownWithoutBotId, otherBot, botMessage].map((d) => [d.status, d.body])).toEqual([
      [200, { ok: true, ignored: 'bot_author' }],
      [200, { ok: true, ignored: 'self' }],
      [200, { ok: true, ignored: 'bot_author' }],
      [200, { ok: true, ignored: 'bot_author' }],
    ]);
    expect(await conversationsIn('D300')).toEqual([]);

    // Had any of them started a turn, its reply would come before this one.
    await system.sendSlack({ channel: 'D300', user: 'U300', text: 'a person' });
    const replies = await system.waitForSlack('D300', 1);
    expect(replies.map((r) => r.text)).toEqual(['echo: a person']);
    expect(await countInbound('D300')).toBe(1);
  });

  it('ignores edits and deletions', async () => {
    const first = await system.sendSlack({ channel: 'D301', user: 'U301', text: 'original' });
    await system.waitForSlack('D301', 1);
    const edit = await system.sendSlack({ channel: 'D301', user: 'U301', text: 'edited', subtype: 'message_changed', ts: first.ts });
    const deletion = await system.sendSlack({ channel: 'D301', user: 'U301', text: 'original', subtype: 'message_deleted', ts: first.ts });
    expect([edit.body, deletion.body]).toEqual([
      { ok: true, ignored: 'unsupported_subtype' },
      { ok: true, ignored: 'unsupported_subtype' },
    ]);
    await system.sendSlack({ channel: 'D301', user: 'U301', text: 'next' });
    const replies = await system.waitForSlack('D301', 2);
    expect(replies.map((r) => r.text)).toEqual(['echo: original', 'echo: next']);
  });

  it('answers an event delivered twice, and a Slack retry of a stored event, only once', async () => {
    const first = await system.sendSlack({ channel: 'D400', user: 'U400', text: 'only once please' });
    const again = await system.sendSlack({ channel: 'D400', user: 'U400', text: 'only once please', event_id: first.eventId });
    const retry = await system.sendSlack({ channel: 'D400', user: 'U400', text: 'only once please', event_id: first.eventId, retryNum: 1, retryReason: 'http_timeout' });
    expect([first.status, again.status, retry.status]).toEqual([200, 200, 200]);
    expect(retry.attempts).toEqual([expect.objectContaining({ status: 200, retryNum: 1, retryReason: 'http_timeout' })]);
    expect(retry.body).toEqual({ ok: true, outcome: 'duplicate' });
    await system.waitForSlack('D400', 1);

    await system.sendSlack({ channel: 'D400', user: 'U400', text: 'second message' });
    // Replies arrive in order per conversation: a second turn for the duplicate would sit between these two.
    const replies = await system.waitForSlack('D400', 2);
    expect(replies.map((r) => r.text)).toEqual(['echo: only once please', 'echo: second message']);
    expect(await countInbound('D400')).toBe(2);
  });

  it('processes a retry whose first attempt was never stored', async () => {
    const retry = await system.sendSlack({ channel: 'D401', user: 'U401', text: 'first attempt was lost', retryNum: 2, retryReason: 'http_error' });
    expect(retry.body).toEqual({ ok: true, outcome: 'accepted' });
    const [reply] = await system.waitForSlack('D401', 1);
    expect(reply?.text).toBe('echo: first attempt was lost');
  });

  it('rejects a bad, expired or missing signature with 401 and stores nothing', async () => {
    const before = await countInbound();
    const bad = await system.sendSlack({ channel: 'D500', user: 'U500', text: 'forged', signing: 'bad' });
    // Slack retries a 401 like any failure; every attempt is refused.
    expect(bad.attempts.map((a) => a.status)).toEqual([401, 401, 401, 401]);
    const stale = await system.sendSlack({ channel: 'D500', user: 'U500', text: 'replayed', signing: 'stale', retryOnFailure: false });
    const unsigned = await system.sendSlack({ channel: 'D500', user: 'U500', text: 'unsigned', signing: 'none', retryOnFailure: false });
    expect([stale.status, unsigned.status]).toEqual([401, 401]);
    expect(await countInbound()).toBe(before);
    expect(await conversationsIn('D500')).toEqual([]);
  });

  it('answers url_verification with the challenge, only when signed', async () => {
    const verified = (await postJson(`${system.simUrl}/control/slack/url-verification`, { challenge: 'challenge-3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' })) as Record<string, unknown>;
    expect(verified).toEqual({
      challenge: 'challenge-3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      status: 200,
      body: { challenge: 'challenge-3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' },
      verified: true,
    });
    const forged = (await postJson(`${system.simUrl}/control/slack/url-verification`, { signing: 'bad' })) as Record<string, unknown>;
    expect(forged).toMatchObject({ status: 401, verified: false });
  });

  it('answers ssl_check unsigned, malformed bodies with 400, and stores nothing', async () => {
    const url = `${system.gateway.url}/webhooks/slack/events`;
    const before = await countInbound();
    const sslCheck = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'ssl_check=1&token=x' });
    expect(sslCheck.status).toBe(200);
    const malformed = '{"type":"event_callback","event":';
    const broken = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signSlackBody(malformed) }, body: malformed });
    expect(broken.status).toBe(400);
    const unknown = JSON.stringify({ hello: 'world' });
    const unknownAnswer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signSlackBody(unknown) }, body: unknown });
    expect(unknownAnswer.status).toBe(400);
    const incomplete = JSON.stringify({ type: 'event_callback', team_id: 'T0SIM', event_id: 'Ev1', event: { type: 'message', channel_type: 'im', user: 'U1', text: 'x' } });
    const incompleteAnswer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signSlackBody(incomplete) }, body: incomplete });
    expect(incompleteAnswer.status).toBe(400);
    // The Telegram route beside it still parses JSON with Fastify's own parser.
    const telegram = await fetch(`${system.gateway.url}/webhooks/telegram`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(telegram.status).toBe(401);
    expect(await countInbound()).toBe(before);
  });

  it('delivers a long reply as 4,000-character parts in order in the same place', async () => {
    await system.setModelScript({ rules: [{ match: 'long answer', replyRepeat: { text: 'lorem ipsum dolor sit amet ', count: 186 } }] });
    await system.sendSlack({ channel: 'D600', user: 'U600', text: 'give me a long answer' });
    const parts = await system.waitForSlack('D600', 2);
    expect(parts).toHaveLength(2);
    for (const part of parts) {
      expect(part.text.length).toBeLessThanOrEqual(4000);
      expect(part.thread_ts).toBeUndefined();
    }
    expect(parts[0]!.text.length).toBeGreaterThan(3900);
    expect(Number(parts[0]!.ts)).toBeLessThan(Number(parts[1]!.ts));
    const whole = 'lorem ipsum dolor sit amet '.repeat(186).trim();
    expect(parts.map((p) => p.text).join(' ').trimEnd()).toBe(whole);
    await system.setModelScript({});
  });

  it('waits out a 429 on chat.postMessage and delivers exactly once', async () => {
    await postJson(`${system.simUrl}/control/slack/faults`, { method: 'chat.postMessage', kind: '429', times: 1, retryAfter: 1 });
    await system.sendSlack({ channel: 'D700', user: 'U700', text: 'rate limited once' });
    const [reply] = await system.waitForSlack('D700', 1);
    expect(reply?.text).toBe('echo: rate limited once');
    const faults = await fetch(`${system.simUrl}/control/slack/faults`).then((r) => r.json());
    expect(faults).toEqual([]);

    await system.sendSlack({ channel: 'D700', user: 'U700', text: 'after the limit' });
    const replies = await system.waitForSlack('D700', 2);
    expect(replies.map((r) => r.text)).toEqual(['echo: rate limited once', 'echo: after the limit']);
    await expect.poll(() => outboxIn('D700'), pollOptions).toEqual(replies.map((r) => ({ status: 'sent', platform_message_id: r.ts })));
  });

  it('posts model output escaped, so <!channel> reaches Slack as text and notifies no one', async () => {
    await system.setModelScript({ rules: [{ match: 'announce', reply: 'Hey <!channel> & <!here> <!everyone>: a > b' }] });
    await system.sendSlack({ channel: 'D800', user: 'U800', text: 'announce it' });
    const [reply] = await system.waitForSlack('D800', 1);
    expect(reply?.text).toBe('Hey &lt;!channel&gt; &amp; &lt;!here&gt; &lt;!everyone&gt;: a &gt; b');
    // Stored as the model wrote it: escaping belongs to Slack's wire format only.
    const [stored] = await system.sql<{ content: string }[]>`
      select m.content from messages m join conversations c on c.current_session_id = m.session_id where c.chat_id = 'D800' and m.role = 'assistant'`;
    expect(stored?.content).toBe('Hey <!channel> & <!here> <!everyone>: a > b');
    await system.setModelScript({});
  });
});
