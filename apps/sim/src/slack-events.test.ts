import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim, type SlackDeliveryAttempt, type SlackEventEnvelope } from './index.ts';

const signingSecret = 'sim-events-test-secret';

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
}

interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Hold the answer this long. */
  delayMs?: number;
}

/** A stand-in gateway: records each POST and answers with the next scripted answer (200 once the script runs out). */
class FakeReceiver {
  readonly received: Received[] = [];
  answers: Answer[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        this.received.push({ headers: request.headers, raw: Buffer.concat(parts).toString('utf8') });
        const answer = this.answers.shift() ?? { status: 200, body: '{"ok":true}' };
        const send = () => {
          if (response.destroyed) return;
          response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          response.end(answer.body ?? '');
        };
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks/slack/events`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** Slack's documented check, written out here independently of the sim. */
function signatureValid(request: Received, secret = signingSecret): boolean {
  const timestamp = request.headers['x-slack-request-timestamp'];
  const signature = request.headers['x-slack-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return false;
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${request.raw}`).digest('hex')}`);
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

let receiver: FakeReceiver;
let eventsUrl: string;
let sim: Sim;
let baseUrl: string;

beforeAll(async () => {
  receiver = new FakeReceiver();
  eventsUrl = await receiver.start();
  sim = await createSim({ slackSigningSecret: signingSecret, slackEventsUrl: eventsUrl, slackAckTimeoutMs: 300, logLevel: 'silent' });
  baseUrl = await sim.listen(0);
});

afterAll(async () => {
  await sim.close();
  await receiver.stop();
});

afterEach(() => {
  sim.reset();
  receiver.received.length = 0;
  receiver.answers = [];
});

interface EventAnswer {
  event_id: string;
  ts: string;
  delivered: boolean;
  attempts: SlackDeliveryAttempt[];
  envelope: SlackEventEnvelope;
}

async function post(path: string, body: unknown): Promise<{ status: number; json: EventAnswer & Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as EventAnswer & Record<string, unknown> };
}

describe('Slack Events API delivery', () => {
  it('POSTs a signed event_callback for a DM, with the envelope Slack sends', async () => {
    const { status, json } = await post('/control/slack/events', { channel: 'D001', user: 'U100', text: 'hello there' });
    expect(status).toBe(200);
    expect(json.attempts).toEqual([{ status: 200, retryNum: 0, body: { ok: true }, ackMs: expect.any(Number) }]);
    expect(json.delivered).toBe(true);

    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received as [Received];
    expect(request.headers['content-type']).toBe('application/json');
    expect(signatureValid(request)).toBe(true);
    expect(Math.abs(Number(request.headers['x-slack-request-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    expect(request.headers['x-slack-retry-num']).toBeUndefined();
    const envelope = JSON.parse(request.raw) as SlackEventEnvelope;
    expect(envelope).toEqual(json.envelope);
    expect(envelope).toEqual({
      token: expect.any(String),
      team_id: 'T0SIM',
      api_app_id: 'A0SIM',
      type: 'event_callback',
      event_id: json.event_id,
      event_time: expect.any(Number),
      authorizations: [{ enterprise_id: null, team_id: 'T0SIM', user_id: 'U0SIMBOT', is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
      event_context: expect.any(String),
      event: {
        type: 'message',
        channel: 'D001',
        channel_type: 'im',
        user: 'U100',
        text: 'hello there',
        ts: json.ts,
        event_ts: json.ts,
        team: 'T0SIM',
        client_msg_id: expect.any(String),
      },
    });
    expect(json.event_id).toMatch(/^Ev[0-9A-Z]+$/);
  });

  it('sends a channel message as app_mention by default, keeps thread_ts, and numbers events in order', async () => {
    const first = await post('/control/slack/events', { channel: 'C001', user: 'U100', text: '<@U0SIMBOT> hi' });
    const second = await post('/control/slack/events', { channel: 'C001', user: 'U100', text: '<@U0SIMBOT> more', thread_ts: first.json.ts });
    expect(first.json.envelope.event).toMatchObject({ type: 'app_mention', channel: 'C001', text: '<@U0SIMBOT> hi' });
    expect(first.json.envelope.event).not.toHaveProperty('channel_type');
    expect(second.json.envelope.event).toMatchObject({ thread_ts: first.json.ts });
    expect(second.json.event_id > first.json.event_id).toBe(true);
    expect(Number(second.json.ts)).toBeGreaterThan(Number(first.json.ts));
    const given = await post('/control/slack/events', { channel: 'D001', user: 'U100', text: 'again', event_id: first.json.event_id });
    expect(given.json.event_id).toBe(first.json.event_id);
  });

  it('describes bot posts, edits and deletions as Slack does', async () => {
    const bot = await post('/control/slack/events', { type: 'message', channel: 'D002', user: 'U0SIMBOT', bot_id: 'B0SIMBOT', text: 'my reply' });
    expect(bot.json.envelope.event).toMatchObject({ user: 'U0SIMBOT', bot_id: 'B0SIMBOT', app_id: 'A0SIM' });
    expect(bot.json.envelope.event).not.toHaveProperty('client_msg_id');
    const edit = await post('/control/slack/events', { channel: 'D002', user: 'U100', text: 'edited', subtype: 'message_changed', ts: bot.json.ts });
    expect(edit.json.envelope.event).toMatchObject({ subtype: 'message_changed', hidden: true, message: { user: 'U100', text: 'edited', ts: bot.json.ts } });
    expect(edit.json.envelope.event).not.toHaveProperty('user');
    const deletion = await post('/control/slack/events', { channel: 'D002', user: 'U100', text: 'x', subtype: 'message_deleted', ts: bot.json.ts });
    expect(deletion.json.envelope.event).toMatchObject({ subtype: 'message_deleted', deleted_ts: bot.json.ts });
  });

  it('retries a failed delivery up to 3 times at once with X-Slack-Retry-Num and the reason, same body, fresh signature', async () => {
    receiver.answers = [{ status: 500 }, { status: 503 }, { status: 500 }, { status: 500 }];
    const { json } = await post('/control/slack/events', { channel: 'D003', user: 'U100', text: 'unlucky' });
    expect(json.attempts.map((attempt) => [attempt.status, attempt.retryNum, attempt.retryReason])).toEqual([
      [500, 0, undefined],
      [503, 1, 'http_error'],
      [500, 2, 'http_error'],
      [500, 3, 'http_error'],
    ]);
    expect(json.delivered).toBe(false);
    expect(receiver.received.map((request) => [request.headers['x-slack-retry-num'], request.headers['x-slack-retry-reason']])).toEqual([
      [undefined, undefined],
      ['1', 'http_error'],
      ['2', 'http_error'],
      ['3', 'http_error'],
    ]);
    expect(new Set(receiver.received.map((request) => request.raw)).size).toBe(1);
    expect(receiver.received.every((request) => signatureValid(request))).toBe(true);
  });

  it('stops retrying on success, on X-Slack-No-Retry: 1, or when asked not to retry', async () => {
    receiver.answers = [{ status: 500 }, { status: 200 }];
    const recovered = await post('/control/slack/events', { channel: 'D004', user: 'U100', text: 'a' });
    expect(recovered.json.attempts.map((attempt) => attempt.status)).toEqual([500, 200]);
    expect(recovered.json.delivered).toBe(true);

    receiver.answers = [{ status: 500, headers: { 'x-slack-no-retry': '1' } }];
    const refused = await post('/control/slack/events', { channel: 'D004', user: 'U100', text: 'b' });
    expect(refused.json.attempts).toHaveLength(1);

    receiver.answers = [{ status: 503 }];
    const once = await post('/control/slack/events', { channel: 'D004', user: 'U100', text: 'c', retryOnFailure: false });
    expect(once.json.attempts).toHaveLength(1);
  });

  it('acts out a later retry when asked, carrying its number and reason from the first request', async () => {
    receiver.answers = [{ status: 500 }];
    const { json } = await post('/control/slack/events', { channel: 'D004', user: 'U100', text: 'r', retryNum: 2, retryReason: 'http_error' });
    expect(json.attempts.map((attempt) => [attempt.status, attempt.retryNum, attempt.retryReason])).toEqual([
      [500, 2, 'http_error'],
      [200, 3, 'http_error'],
    ]);
    expect(receiver.received.map((request) => request.headers['x-slack-retry-num'])).toEqual(['2', '3']);
  });

  it('counts an answer slower than the ack timeout as failed and retries with http_timeout', async () => {
    receiver.answers = [{ status: 200, delayMs: 1000 }];
    const { json } = await post('/control/slack/events', { channel: 'D005', user: 'U100', text: 'slow' });
    expect(json.attempts.map((attempt) => [attempt.status, attempt.retryNum, attempt.retryReason])).toEqual([
      [0, 0, undefined],
      [200, 1, 'http_timeout'],
    ]);
    expect(json.attempts[0]?.error).toBe('timeout');
  });

  it('signs badly, stale or not at all when asked', async () => {
    await post('/control/slack/events', { channel: 'D006', user: 'U100', text: 'x', signing: 'bad', retryOnFailure: false });
    await post('/control/slack/events', { channel: 'D006', user: 'U100', text: 'y', signing: 'stale', retryOnFailure: false });
    await post('/control/slack/events', { channel: 'D006', user: 'U100', text: 'z', signing: 'none', retryOnFailure: false });
    const [bad, stale, none] = receiver.received as [Received, Received, Received];
    expect(signatureValid(bad)).toBe(false);
    expect(signatureValid(stale)).toBe(true);
    expect(Date.now() / 1000 - Number(stale.headers['x-slack-request-timestamp'])).toBeGreaterThan(300);
    expect(none.headers['x-slack-signature']).toBeUndefined();
  });

  it('sends a signed url_verification challenge and reports whether it was echoed', async () => {
    receiver.answers = [{ status: 200, body: JSON.stringify({ challenge: 'c-123' }) }];
    const good = await post('/control/slack/url-verification', { challenge: 'c-123' });
    expect(good.json).toEqual({ challenge: 'c-123', status: 200, body: { challenge: 'c-123' }, verified: true });
    expect(JSON.parse(receiver.received[0]?.raw ?? '')).toEqual({ token: expect.any(String), challenge: 'c-123', type: 'url_verification' });
    expect(signatureValid(receiver.received[0] as Received)).toBe(true);

    receiver.answers = [{ status: 200, body: '{"ok":true}' }];
    const ignored = await post('/control/slack/url-verification', {});
    expect(ignored.json).toMatchObject({ status: 200, verified: false });
  });

  it('answers 409 without a Request URL and 400 for bad input', async () => {
    await post('/control/slack/request-url', { url: null });
    const none = await post('/control/slack/events', { channel: 'D007', user: 'U100', text: 'lost' });
    expect([none.status, none.json.code]).toEqual([409, 'SIM_NO_REQUEST_URL']);
    await post('/control/slack/request-url', { url: eventsUrl });
    const bad = await post('/control/slack/events', { channel: 'D007', text: 'no user', thread_ts: 'nope' });
    expect(bad.status).toBe(400);
    expect(String(bad.json.message)).toMatch(/user: .*thread_ts: /);
  });
});
