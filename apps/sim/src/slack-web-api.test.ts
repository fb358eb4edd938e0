import { ErrorCode, LogLevel, WebClient, type WebAPIPlatformError, type WebAPIRateLimitedError } from '@slack/web-api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSim, type Sim, type SlackSentRecord } from './index.ts';

const token = 'xoxb-sim-test-token';

let sim: Sim;
let baseUrl: string;
let client: WebClient;

beforeAll(async () => {
  sim = await createSim({ slackBotToken: token, logLevel: 'silent' });
  baseUrl = await sim.listen(0);
  client = clientFor(token);
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => sim.reset());

function clientFor(withToken: string): WebClient {
  return new WebClient(withToken, { slackApiUrl: `${baseUrl}/api/`, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, logLevel: LogLevel.ERROR });
}

async function control(path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function rejection(call: Promise<unknown>): Promise<{ code: string; data?: { error: string }; retryAfter?: number; statusCode?: number }> {
  return call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error as { code: string },
  );
}

describe('Slack Web API through @slack/web-api', () => {
  it('auth.test describes the workspace, the bot user and the bot', async () => {
    const me = await client.auth.test();
    expect(me).toMatchObject({ ok: true, url: 'https://switchboard-sim.slack.com/', team: 'Switchboard Sim', user: 'switchboard', team_id: 'T0SIM', user_id: 'U0SIMBOT', bot_id: 'B0SIMBOT' });
  });

  it('rejects another token with invalid_auth and no token with not_authed, as HTTP 200', async () => {
    const error = (await rejection(clientFor('xoxb-other').auth.test())) as WebAPIPlatformError;
    expect(error.code).toBe(ErrorCode.PlatformError);
    expect(error.data.error).toBe('invalid_auth');
    const response = await fetch(`${baseUrl}/api/auth.test`, { method: 'POST' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: false, error: 'not_authed' });
  });

  it('chat.postMessage returns increasing unique ts, threads, and records each message', async () => {
    const first = await client.chat.postMessage({ channel: 'C100', text: 'hello' });
    const second = await client.chat.postMessage({ channel: 'C100', text: 'in thread', thread_ts: first.ts as string });
    const elsewhere = await client.chat.postMessage({ channel: 'D200', text: 'dm' });
    expect(first).toMatchObject({ ok: true, channel: 'C100', message: { type: 'message', text: 'hello', user: 'U0SIMBOT', bot_id: 'B0SIMBOT', ts: first.ts } });
    expect(first.ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(second.message).toMatchObject({ thread_ts: first.ts });
    const stamps = [first.ts, second.ts, elsewhere.ts].map(Number);
    expect(stamps[0]).toBeLessThan(stamps[1] as number);
    expect(stamps[1]).toBeLessThan(stamps[2] as number);

    const { json } = await control('/control/slack/sent?channel=C100');
    const sent = json as SlackSentRecord[];
    expect(sent.map((record) => [record.ts, record.channel, record.thread_ts, record.text])).toEqual([
      [first.ts, 'C100', undefined, 'hello'],
      [second.ts, 'C100', first.ts, 'in thread'],
    ]);
    const thread = await control(`/control/slack/sent?channel=C100&thread_ts=${first.ts}`);
    expect((thread.json as SlackSentRecord[]).map((record) => record.text)).toEqual(['in thread']);
  });

  it('accepts JSON bodies with a bearer token, as the API does', async () => {
    const response = await fetch(`${baseUrl}/api/chat.postMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${token}` },
      body: JSON.stringify({ channel: 'C101', text: 'json' }),
    });
    expect(await response.json()).toMatchObject({ ok: true, channel: 'C101', message: { text: 'json' } });
  });

  it('refuses a message without channel or text, and truncates text past 40,000 characters', async () => {
    expect(((await rejection(client.chat.postMessage({ channel: 'C102', text: '' }))) as WebAPIPlatformError).data.error).toBe('no_text');
    const long = await client.chat.postMessage({ channel: 'C102', text: 'x'.repeat(40_001) });
    expect(long.message?.text).toHaveLength(40_000);
    const { json } = await control('/control/slack/sent?channel=C102');
    expect(json).toMatchObject([{ truncated: true }]);
  });

  it('chat.update edits a message the bot posted and refuses an unknown one', async () => {
    const posted = await client.chat.postMessage({ channel: 'C103', text: 'draft' });
    const updated = await client.chat.update({ channel: 'C103', ts: posted.ts as string, text: 'final' });
    expect(updated).toMatchObject({ ok: true, channel: 'C103', ts: posted.ts, text: 'final' });
    const { json } = await control('/control/slack/sent?channel=C103');
    expect(json).toMatchObject([{ ts: posted.ts, text: 'final', edits: [{ text: 'final' }] }]);
    const missing = (await rejection(client.chat.update({ channel: 'C103', ts: '1.000001', text: 'x' }))) as WebAPIPlatformError;
    expect(missing.data.error).toBe('message_not_found');
  });

  it('answers an armed 429 with Retry-After, which the SDK reports as rate limited', async () => {
    const armed = await control('/control/slack/faults', { method: 'chat.postMessage', kind: '429', times: 2, retryAfter: 7 });
    expect(armed.status).toBe(200);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const error = (await rejection(client.chat.postMessage({ channel: 'C104', text: 'limited' }))) as WebAPIRateLimitedError;
      expect(error.code).toBe(ErrorCode.RateLimitedError);
      expect(error.retryAfter).toBe(7);
    }
    await expect(client.chat.postMessage({ channel: 'C104', text: 'through' })).resolves.toMatchObject({ ok: true });
    const raw = await control('/control/slack/faults', { method: '*', kind: '429', retryAfter: 3 });
    expect(raw.status).toBe(200);
    const response = await fetch(`${baseUrl}/api/auth.test`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect([response.status, response.headers.get('retry-after')]).toEqual([429, '3']);
    expect((await control('/control/slack/sent?channel=C104')).json).toHaveLength(1);
  });

  it('answers an armed 500 with an HTTP error', async () => {
    await control('/control/slack/faults', { method: 'chat.postMessage', kind: '500' });
    const error = await rejection(client.chat.postMessage({ channel: 'C105', text: 'x' }));
    expect([error.code, error.statusCode]).toEqual([ErrorCode.HTTPError, 500]);
  });

  it('refuses refuse-markup, a fault only Telegram has', async () => {
    expect((await control('/control/slack/faults', { method: 'chat.postMessage', kind: 'refuse-markup' })).status).toBe(400);
  });

  it('answers an unknown method with unknown_method', async () => {
    const response = await fetch(`${baseUrl}/api/chat.telepathy`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(await response.json()).toEqual({ ok: false, error: 'unknown_method', req_method: 'chat.telepathy' });
  });

  it('wakes /control/slack/wait when the awaited message is posted, and times out with 408', async () => {
    const timedOut = await control('/control/slack/wait?channel=C106&count=1&timeout_ms=30');
    expect(timedOut).toEqual({ status: 408, json: { error: 'timeout', code: 'SIM_WAIT_TIMEOUT', sent: [] } });
    const waiting = control('/control/slack/wait?channel=C106&count=2&timeout_ms=5000');
    await client.chat.postMessage({ channel: 'C106', text: 'one' });
    await client.chat.postMessage({ channel: 'C106', text: 'two' });
    const { status, json } = await waiting;
    expect(status).toBe(200);
    expect((json as SlackSentRecord[]).map((record) => record.text)).toEqual(['one', 'two']);
  });
});
