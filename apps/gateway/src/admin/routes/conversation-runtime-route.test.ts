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

// Issue 21: an operator sets a conversation's runtime and Codex permission
// profile through the admin API (PUT /admin/conversations/{id}/runtime); the
// list and the detail show them; full-access is refused unless
// CODEX_ALLOW_FULL_ACCESS; every attempt is in the audit log. On the gateway's
// own app through inject, with real Postgres and Redis.

const token = 'alice-0123456789abcdef';
const db = useTestDbClient();
const auth = { authorization: `Bearer ${token}` };

interface Conversation {
  id: number;
  runtime: string | null;
  permissionProfile: string | null;
  runtimeCrashStreak: number;
}

describe('PUT /admin/conversations/{id}/runtime', () => {
  let redis: Redis;
  let queue: TurnQueue;
  let strict: FastifyInstance;
  let permissive: FastifyInstance;

  async function gatewayWith(env: Record<string, string>): Promise<FastifyInstance> {
    const config = parseConfig(gatewayEnvSchema, { DATABASE_URL: db.url, REDIS_URL: redisUrl(), REDIS_PREFIX: createRedisPrefix(), LOG_LEVEL: 'silent', ADMIN_TOKEN: `alice:${token}`, ...env });
    const app = await buildGatewayApp({ config, db: db.client.db, queue, redis, log: createLogger('runtime-route-test', 'silent') });
    await app.ready();
    return app;
  }

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    queue = createTurnQueue(redis, createRedisPrefix());
    strict = await gatewayWith({ AGENT_RUNTIME: 'codex' });
    permissive = await gatewayWith({ CODEX_ALLOW_FULL_ACCESS: 'on' });
  });
  afterAll(async () => {
    await strict?.close();
    await permissive?.close();
    await queue?.close();
    redis?.disconnect();
  });

  async function newConversation(chatId: string): Promise<number> {
    const stored = await storeInboundEvent(db.client.db, {
      platform: 'telegram', accountId: 'bot', eventId: `rt-${chatId}`, conversationKey: `telegram:bot:${chatId}::`,
      chatId, threadId: '', userScope: '', userId: 'u1', text: 'hello', replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
    });
    return stored.conversationId;
  }

  const put = (app: FastifyInstance, id: number, payload: unknown) => app.inject({ method: 'PUT', url: `/admin/conversations/${id}/runtime`, headers: auth, payload: payload as object });
  const get = async <T>(app: FastifyInstance, url: string): Promise<T> => (await app.inject({ method: 'GET', url, headers: auth })).json<T>();
  const auditOf = (id: number) => get<{ items: { action: string; actor: string; result: string; detail: Record<string, unknown> }[] }>(strict, `/admin/audit?target=conversation:${id}`);

  it('sets the runtime and the profile, shown in the detail and the list, and audited', async () => {
    const id = await newConversation('3101');
    const fresh = await get<{ conversation: Conversation; defaultRuntime: string; fullAccessAllowed: boolean }>(strict, `/admin/conversations/${id}`);
    expect(fresh).toMatchObject({ conversation: { runtime: null, permissionProfile: null, runtimeCrashStreak: 0 }, defaultRuntime: 'codex', fullAccessAllowed: false });

    const set = await put(strict, id, { runtime: 'codex', permissionProfile: 'workspace-write' });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ ok: true, conversation: { id, runtime: 'codex', permissionProfile: 'workspace-write' } });
    // A field left out stays; null goes back to the default.
    expect((await put(strict, id, { runtime: null })).json()).toMatchObject({ conversation: { runtime: null, permissionProfile: 'workspace-write' } });
    expect((await put(strict, id, { runtime: 'openai' })).json()).toMatchObject({ conversation: { runtime: 'openai', permissionProfile: 'workspace-write' } });

    expect((await get<{ conversation: Conversation }>(strict, `/admin/conversations/${id}`)).conversation).toMatchObject({ runtime: 'openai', permissionProfile: 'workspace-write' });
    const list = await get<{ items: Conversation[] }>(strict, '/admin/conversations?limit=500');
    expect(list.items.find((c) => c.id === id)).toMatchObject({ runtime: 'openai', permissionProfile: 'workspace-write', runtimeCrashStreak: 0 });

    const audit = await auditOf(id);
    expect(audit.items.filter((row) => row.action === 'conversation.runtime').map((row) => [row.actor, row.result, row.detail]).reverse()).toEqual([
      ['alice', 'ok', { runtime: 'codex', permissionProfile: 'workspace-write' }],
      ['alice', 'ok', { runtime: null }],
      ['alice', 'ok', { runtime: 'openai' }],
    ]);
  });

  it('refuses full-access with 403 FULL_ACCESS_DISABLED unless CODEX_ALLOW_FULL_ACCESS, changing nothing, and audits the refusal', async () => {
    const id = await newConversation('3102');
    const refused = await put(strict, id, { runtime: 'codex', permissionProfile: 'full-access' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ ok: false, error: 'FULL_ACCESS_DISABLED', field: 'permissionProfile' });
    expect((await get<{ conversation: Conversation }>(strict, `/admin/conversations/${id}`)).conversation).toMatchObject({ runtime: null, permissionProfile: null });
    expect((await auditOf(id)).items.find((row) => row.action === 'conversation.runtime')).toMatchObject({ result: 'FULL_ACCESS_DISABLED', detail: { permissionProfile: 'full-access' } });

    const allowed = await put(permissive, id, { runtime: 'codex', permissionProfile: 'full-access' });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json()).toMatchObject({ conversation: { runtime: 'codex', permissionProfile: 'full-access' } });

    // Full access that asks nothing is gated alike (issue 30, finding 1).
    expect((await put(strict, id, { permissionProfile: 'full-access-unattended' })).statusCode).toBe(403);
    const unattended = await put(permissive, id, { permissionProfile: 'full-access-unattended' });
    expect(unattended.statusCode).toBe(200);
    expect(unattended.json()).toMatchObject({ conversation: { runtime: 'codex', permissionProfile: 'full-access-unattended' } });
  });

  it('answers 404 for no such conversation and 400 for a value or a body it does not know', async () => {
    const missing = await put(strict, 987_654_321, { runtime: 'codex' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'CONVERSATION_NOT_FOUND' });
    const id = await newConversation('3103');
    for (const body of [{ runtime: 'claude' }, { permissionProfile: 'root' }, {}, { runtime: 'codex', sandbox: 'none' }]) {
      const bad = await put(strict, id, body);
      expect(bad.statusCode, JSON.stringify(body)).toBe(400);
      expect(bad.json()).toMatchObject({ error: 'INVALID_REQUEST' });
    }
    expect((await get<{ conversation: Conversation }>(strict, `/admin/conversations/${id}`)).conversation).toMatchObject({ runtime: null, permissionProfile: null });
  });

  it('is in the OpenAPI document', async () => {
    const doc = await get<{ paths: Record<string, Record<string, unknown>> }>(strict, '/admin/openapi.json');
    expect(Object.keys(doc.paths['/admin/conversations/{id}/runtime'] ?? {})).toContain('put');
  });
});
