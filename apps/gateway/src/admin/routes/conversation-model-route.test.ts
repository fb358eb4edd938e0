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

// Issue 22, item 5: an operator chooses the model of one conversation
// (PUT /admin/conversations/{id}/model) and whether it may fall back; null
// goes back to the configured order. Bad input changes nothing; every change
// is audited; the route is in the OpenAPI document.

const token = 'alice-0123456789abcdef';
const db = useTestDbClient();
const auth = { authorization: `Bearer ${token}` };

interface ModelView {
  conversation: { model: string | null; modelFallback: boolean };
}

describe('PUT /admin/conversations/{id}/model', () => {
  let redis: Redis;
  let queue: TurnQueue;
  let app: FastifyInstance;

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    queue = createTurnQueue(redis, createRedisPrefix());
    const config = parseConfig(gatewayEnvSchema, { DATABASE_URL: db.url, REDIS_URL: redisUrl(), REDIS_PREFIX: createRedisPrefix(), LOG_LEVEL: 'silent', ADMIN_TOKEN: `alice:${token}` });
    app = await buildGatewayApp({ config, db: db.client.db, queue, redis, log: createLogger('model-route-test', 'silent') });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await queue?.close();
    redis?.disconnect();
  });

  async function newConversation(chatId: string): Promise<number> {
    const stored = await storeInboundEvent(db.client.db, {
      platform: 'telegram', accountId: 'bot', eventId: `md-${chatId}`, conversationKey: `telegram:bot:${chatId}::`,
      chatId, threadId: '', userScope: '', userId: 'u1', text: 'hello', replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
    });
    return stored.conversationId;
  }

  const put = (id: number, payload: unknown) => app.inject({ method: 'PUT', url: `/admin/conversations/${id}/model`, headers: auth, payload: payload as object });
  const get = async <T>(url: string): Promise<T> => (await app.inject({ method: 'GET', url, headers: auth })).json<T>();

  it('sets and clears the model, fallback off unless asked, shown in the detail and the list, and audited', async () => {
    const id = await newConversation('4201');
    expect(await get<ModelView>(`/admin/conversations/${id}`)).toMatchObject({ conversation: { model: null, modelFallback: false } });
    const pinned = await put(id, { model: 'fallback-model' });
    expect(pinned.statusCode).toBe(200);
    expect(pinned.json()).toMatchObject({ ok: true, conversation: { id, model: 'fallback-model', modelFallback: false } });
    expect((await put(id, { model: 'gpt-x', fallback: true })).json()).toMatchObject({ conversation: { model: 'gpt-x', modelFallback: true } });
    const list = await get<{ items: { id: number; model: string | null; modelFallback: boolean }[] }>('/admin/conversations?limit=500');
    expect(list.items.find((c) => c.id === id)).toMatchObject({ model: 'gpt-x', modelFallback: true });
    // Cleared: back to the configured order, and no fallback flag kept for no model.
    expect((await put(id, { model: null, fallback: true })).json()).toMatchObject({ conversation: { model: null, modelFallback: false } });
    const audit = await get<{ items: { action: string; actor: string; detail: Record<string, unknown> }[] }>(`/admin/audit?target=conversation:${id}`);
    expect(audit.items.filter((i) => i.action === 'conversation.model').map((i) => [i.actor, i.detail]).reverse()).toEqual([
      ['alice', { model: 'fallback-model', fallback: false }],
      ['alice', { model: 'gpt-x', fallback: true }],
      ['alice', { model: null, fallback: false }],
    ]);
  });

  it('refuses a bad body (400) and an unknown conversation (404), changing nothing', async () => {
    const id = await newConversation('4202');
    await put(id, { model: 'kept-model', fallback: true });
    for (const body of [{}, { fallback: true }, { model: '' }, { model: 'two words' }, { model: 7 }, { model: 'm', fallback: 'yes' }, { model: 'm', extra: 1 }, { model: 'x'.repeat(201) }]) {
      const bad = await put(id, body);
      expect(bad.statusCode, JSON.stringify(body)).toBe(400);
      expect(bad.json()).toMatchObject({ error: 'INVALID_REQUEST' });
    }
    const missing = await put(987_654_321, { model: 'm' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ ok: false, error: 'CONVERSATION_NOT_FOUND' });
    expect(await get<ModelView>(`/admin/conversations/${id}`)).toMatchObject({ conversation: { model: 'kept-model', modelFallback: true } });
  });

  it('is in the OpenAPI document', async () => {
    const doc = await get<{ paths: Record<string, Record<string, unknown>> }>('/admin/openapi.json');
    expect(Object.keys(doc.paths['/admin/conversations/{id}/model'] ?? {})).toContain('put');
  });
});
