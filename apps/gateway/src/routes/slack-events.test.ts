import { createHmac } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@switchboard/logger';
import type { IngressDeps } from '../ingress/accept-inbound.ts';
import { registerSlackEvents } from './slack-events.ts';

// The answers Slack gets before anything is stored: signature, url_verification,
// ssl_check, interactivity, malformed and ignored bodies. Complements
// test/e2e/slack.e2e.test.ts, which sends the same kinds through the simulator
// and checks nothing was stored; here each answer's body is checked too, in milliseconds.

const signingSecret = 'slack-signing-secret';
// Every case here is answered before anything is stored; a store attempt would throw on these stubs.
const unreachable = new Proxy({}, { get: () => () => Promise.reject(new Error('nothing may be stored')) });
const deps = { db: unreachable, queue: unreachable, redis: unreachable, redisPrefix: 't', maxQueuedInput: 1, log: createLogger('test', 'silent') } as unknown as IngressDeps;
const url = '/webhooks/slack/events';

function signed(body: string, options: { secret?: string; timestamp?: number } = {}) {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const digest = createHmac('sha256', options.secret ?? signingSecret).update(`v0:${timestamp}:${body}`).digest('hex');
  return { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': `v0=${digest}` };
}

describe('registerSlackEvents', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = Fastify();
    app.post('/echo', async (request) => request.body);
    await registerSlackEvents(app, deps, { signingSecret, context: { botUserId: 'UBOT', botId: 'BBOT' } });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  const postJson = (body: string, headers: Record<string, string> = signed(body)) => app.inject({ method: 'POST', url, payload: body, headers: { 'content-type': 'application/json', ...headers } });
  const postForm = (body: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url, payload: body, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });

  it('answers url_verification with the challenge when signed', async () => {
    const body = JSON.stringify({ type: 'url_verification', token: 'x', challenge: 'c-123' });
    const response = await postJson(body);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ challenge: 'c-123' });
  });

  it('answers 400 to url_verification without a challenge', async () => {
    const body = JSON.stringify({ type: 'url_verification' });
    const response = await postJson(body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ ok: false, error: 'INVALID_PAYLOAD', message: 'url_verification without challenge' });
  });

  it('answers 401 to a bad, stale, missing or malformed signature, url_verification included', async () => {
    const body = JSON.stringify({ type: 'url_verification', challenge: 'c-123' });
    const cases: Record<string, Record<string, string>> = {
      'wrong secret': signed(body, { secret: 'not-the-secret' }),
      stale: signed(body, { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
      missing: {},
      malformed: { ...signed(body), 'x-slack-signature': 'v0=zz' },
      'other bytes': signed(`${body} `),
    };
    for (const [name, headers] of Object.entries(cases)) {
      const response = await postJson(body, headers);
      expect(response.statusCode, name).toBe(401);
      expect(response.json(), name).toEqual({ ok: false, error: 'unauthorized' });
    }
  });

  it('answers the certificate check unsigned, with an empty 200', async () => {
    const response = await postForm('ssl_check=1&token=x');
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('');
  });

  it('serves interactivity on its own URL and the events URL: verified like events, other interactions acknowledged, malformed ones refused', async () => {
    const postInteraction = (body: string, headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/webhooks/slack/interactions', payload: body, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
    const shortcut = `payload=${encodeURIComponent(JSON.stringify({ type: 'shortcut', callback_id: 'x' }))}`;
    for (const post of [postInteraction, postForm]) {
      expect((await post(shortcut, signed(shortcut))).statusCode).toBe(200);
      expect((await post(shortcut, signed(shortcut, { secret: 'not-the-secret' }))).statusCode).toBe(401);
      const noUser = `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', actions: [{ type: 'button', action_id: 'a', value: 'v' }] }))}`;
      const malformed = await post(noUser, signed(noUser));
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toMatchObject({ ok: false, error: 'INVALID_PAYLOAD' });
    }
    const empty = 'foo=bar';
    const response = await postForm(empty, signed(empty));
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ ok: false, error: 'INVALID_PAYLOAD' });
  });

  it('answers 400 to a signed body that is not JSON or not an event', async () => {
    const bodies = {
      'not JSON': '{"type":"event_callback","event":',
      'not an envelope': JSON.stringify({ hello: 'world' }),
      'an event without its ids': JSON.stringify({ type: 'event_callback', team_id: 'T1', event_id: 'Ev1', event: { type: 'message', channel_type: 'im', user: 'U1', text: 'x' } }),
    };
    for (const [name, body] of Object.entries(bodies)) {
      const response = await postJson(body);
      expect(response.statusCode, name).toBe(400);
      expect(response.json(), name).toMatchObject({ ok: false, error: 'INVALID_PAYLOAD' });
    }
  });

  it('acknowledges events it does not take, naming why', async () => {
    const callback = (event: Record<string, unknown>) => JSON.stringify({ type: 'event_callback', team_id: 'T1', api_app_id: 'A1', event_id: `Ev${Math.random()}`, event_time: 1, event });
    const cases = {
      unsupported_event: callback({ type: 'reaction_added', user: 'U1' }),
      bot_author: callback({ type: 'message', channel: 'D1', channel_type: 'im', bot_id: 'B2', text: 'hi', ts: '1.1' }),
      self: callback({ type: 'message', channel: 'D1', channel_type: 'im', user: 'UBOT', text: 'hi', ts: '1.1' }),
      unsupported_subtype: callback({ type: 'message', subtype: 'message_changed', channel: 'D1', channel_type: 'im', ts: '1.1' }),
      app_rate_limited: JSON.stringify({ type: 'app_rate_limited', team_id: 'T1', minute_rate_limited: 1, api_app_id: 'A1' }),
    };
    for (const [reason, body] of Object.entries(cases)) {
      const response = await postJson(body);
      expect(response.statusCode, reason).toBe(200);
      expect(response.json(), reason).toEqual({ ok: true, ignored: reason });
    }
  });

  it('leaves the JSON parser of other routes alone', async () => {
    expect((await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } })).json()).toEqual({ a: 1 });
  });
});
