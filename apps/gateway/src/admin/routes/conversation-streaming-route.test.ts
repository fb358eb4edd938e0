import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig } from '@switchboard/config';
import { storeInboundEvent } from '@switchboard/db';
import { useTestDbClient } from '@switchboard/db/testing';
import { createRedisPrefix, redisUrl } from '@switchboard/harness/test-env';
import { createLogger } from '@switchboard/logger';
import { createTurnQueue, type TurnQueue } from '@switchboard/queue';
import { buildGatewayApp } from '../../app.ts';

// Issue 22, item 1: an operator turns streaming replies on or off for one
// conversation (PUT /admin/conversations/{id}/streaming); null goes back to
// STREAMING. Bad input changes nothing; every change is audited.

const token = 'alice-0123456789abcdef';
const db = useTestDbClient();
const auth = { authorization: `Bearer ${token}` };

describe('PUT /admin/conversations/{id}/streaming', () => {
  let redis: Redis;
  let queue: TurnQueue;
  let app: FastifyInstance;

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    queue = createTurnQueue(redis, createRedisPrefix());
    const config = parseConfig(gatewayEnvSchema, { DATABASE_URL: db.url, REDIS_URL: redisUrl(), REDIS_PREFIX: createRedisPrefix(), LOG_LEVEL: 'silent', ADMIN_TOKEN: `alice:${token}` });
    app = await buildGatewayApp({ config, db: db.client.db, queue, redis, log: createLogger('streaming-route-test', 'silent') });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await queue?.close();
    redis?.disconnect();
  });

  async function newConversation(chatId: string): Promise<number> {
    const stored = await storeInboundEvent(db.client.db, {
      platform: 'telegram', accountId: 'bot', eventId: `st-${chatId}`, conversationKey: `telegram:bot:${chatId}::`,
      chatId, threadId: '', userScope: '', userId: 'u1', text: 'hello', replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
    });
    return stored.conversationId;
  }

  const put = (id: number, payload: unknown) => app.inject({ method: 'PUT', url: `/admin/conversations/${id}/streaming`, headers: auth, payload: payload as object });
  const get = async <T>(url: string): Promise<T> => (await app.inject({ method: 'GET', url, headers: auth })).json<T>();

  it('sets and clears the setting, shown in the detail and audited', async () => {
    const id = await newConversation('4101');
    expect(await get<{ conversation: { streaming: string | null } }>(`/admin/conversations/${id}`)).toMatchObject({ conversation: { streaming: null } });
    const off = await put(id, { streaming: 'off' });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ ok: true, conversation: { id, streaming: 'off' } });
    expect((await put(id, { streaming: null })).json()).toMatchObject({ conversation: { streaming: null } });
    const audit = await get<{ items: { action: string; result: string; detail: Record<string, unknown> }[] }>(`/admin/audit?target=conversation:${id}`);
    expect(audit.items.filter((i) => i.action === 'conversation.streaming').map((i) => i.detail.streaming).sort()).toEqual(['off', null].sort());
  });

  it('refuses a bad value (400) and an unknown conversation (404), changing nothing', async () => {
    const id = await newConversation('4102');
    await put(id, { streaming: 'on' });
    expect((await put(id, { streaming: 'sometimes' })).statusCode).toBe(400);
    expect((await put(id, {})).statusCode).toBe(400);
    const missing = await put(987_654_321, { streaming: 'off' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ ok: false, error: 'CONVERSATION_NOT_FOUND' });
    expect(await get<{ conversation: { streaming: string | null } }>(`/admin/conversations/${id}`)).toMatchObject({ conversation: { streaming: 'on' } });
  });
});
