import Fastify, { type FastifyInstance } from 'fastify';
import { Api } from 'grammy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@switchboard/logger';
import type { IngressDeps } from '../ingress/accept-inbound.ts';
import { registerTelegramWebhook } from './telegram-webhook.ts';

// The answers Telegram gets before anything is stored: the secret token and
// malformed or ignored updates. Complements test/e2e/malformed-requests.e2e.test.ts
// (an unknown chat type through the real processes, then a normal message answered).

const secret = 'telegram-webhook-secret';
// Every case here is answered before anything is stored; a store attempt would throw on these stubs.
const unreachable = new Proxy({}, { get: () => () => Promise.reject(new Error('nothing may be stored')) });
const rejected: string[] = [];
const deps = {
  db: unreachable,
  queue: unreachable,
  redis: unreachable,
  redisPrefix: 't',
  maxQueuedInput: 1,
  log: createLogger('test', 'silent'),
  countRejected: (platform: string, reason: string) => rejected.push(`${platform}:${reason}`),
} as unknown as IngressDeps;

const update = (message: Record<string, unknown>) => ({ update_id: 1, message: { message_id: 1, date: 1, chat: { id: 5, type: 'private' }, from: { id: 5, is_bot: false, first_name: 'A' }, text: 'hi', ...message } });

describe('registerTelegramWebhook', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = Fastify();
    registerTelegramWebhook(app, deps, { secret, context: { botId: '100', botUsername: 'sb_bot' }, api: new Api('100:x', { apiRoot: 'http://127.0.0.1:9' }) });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  const post = (payload: unknown, headers: Record<string, string> = { 'x-telegram-bot-api-secret-token': secret }) =>
    app.inject({ method: 'POST', url: '/webhooks/telegram', payload: typeof payload === 'string' ? payload : JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } });

  it('answers 401 to a missing or wrong secret token, before reading the body', async () => {
    const forged: Record<string, string>[] = [{}, { 'x-telegram-bot-api-secret-token': 'wrong' }, { 'x-telegram-bot-api-secret-token': `${secret}x` }];
    for (const headers of forged) {
      // Not even JSON: a forged request is refused before the body is parsed.
      const response = await post('{not json', headers);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ ok: false, error: 'unauthorized' });
    }
  });

  it('answers 400 to a body that is not an Update', async () => {
    for (const body of [{}, { update_id: 'one' }, { update_id: 1, message: { chat: 'x' } }]) {
      const response = await post(body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json()).toMatchObject({ ok: false, error: 'INVALID_PAYLOAD' });
    }
    // Fastify's own parser refuses JSON that does not parse, in the app's error shape.
    expect((await post('{not json')).statusCode).toBe(400);
  });

  it('acknowledges updates it does not take, naming why', async () => {
    const cases = {
      unsupported_update: { update_id: 2, edited_message: update({}).message },
      no_text: update({ text: undefined }),
      bot_author: update({ from: { id: 6, is_bot: true, first_name: 'B' } }),
      not_addressed: update({ chat: { id: -7, type: 'group' }, text: 'talking among ourselves' }),
      command_for_another_bot: update({ text: '/start@other_bot' }),
    };
    for (const [reason, body] of Object.entries(cases)) {
      const response = await post(body);
      expect(response.statusCode, reason).toBe(200);
      expect(response.json(), reason).toEqual({ ok: true, ignored: reason });
    }
    expect(rejected).toEqual([]);
  });

  it('acknowledges an update from an unknown chat type and counts it', async () => {
    const response = await post(update({ chat: { id: 8, type: 'a_chat_type_from_the_future' } }));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ ok: true });
    expect(rejected).toEqual([expect.stringMatching(/^telegram:/)]);
  });
});
