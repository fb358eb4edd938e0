import type { FastifyInstance, InjectOptions } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig } from '@switchboard/config';
import { useTestDbClient } from '@switchboard/db/testing';
import { createRedisPrefix, redisUrl } from '@switchboard/harness/test-env';
import { createLogger } from '@switchboard/logger';
import { createTurnQueue, type TurnQueue } from '@switchboard/queue';
import { buildGatewayApp } from '../app.ts';

// The admin API's refusals, through the gateway's own app on inject: each
// client address is one option here, where over real HTTP every case needs its
// own loopback address. Complements test/e2e/admin-api.e2e.test.ts
// ("authentication") and admin-bypass.e2e.test.ts, which check the same doors
// through a running gateway; this adds that a request without credentials is
// never counted as a guess. Postgres and Redis are real because the admin API
// opens its own event subscriber and reads the database once past the door.

const aliceToken = 'alice-0123456789abcdef';
const db = useTestDbClient();

describe('admin authentication', () => {
  let redis: Redis;
  let queue: TurnQueue;
  let app: FastifyInstance;
  let plain: FastifyInstance;

  async function gatewayWith(env: Record<string, string>): Promise<FastifyInstance> {
    const redisPrefix = createRedisPrefix();
    const config = parseConfig(gatewayEnvSchema, { DATABASE_URL: db.url, REDIS_URL: redisUrl(), REDIS_PREFIX: redisPrefix, LOG_LEVEL: 'silent', ...env });
    const built = await buildGatewayApp({ config, db: db.client.db, queue, redis, log: createLogger('admin-auth-test', 'silent') });
    await built.ready();
    return built;
  }

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    queue = createTurnQueue(redis, createRedisPrefix());
    app = await gatewayWith({ ADMIN_TOKEN: `alice:${aliceToken}` });
    plain = await gatewayWith({});
  });
  afterAll(async () => {
    await app?.close();
    await plain?.close();
    await queue?.close();
    redis?.disconnect();
  });

  let nextAddress = 10;
  /** A client address no other case has used, so failure counts never mix. */
  const freshAddress = () => `192.0.2.${++nextAddress}`;
  const get = (url: string, from: string, headers: InjectOptions['headers'] = {}) => app.inject({ method: 'GET', url, remoteAddress: from, headers });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('answers 401 naming no secret to a missing, wrong or malformed credential', async () => {
    const from = freshAddress();
    const cases = {
      missing: {},
      wrong: bearer('not-the-token-at-all'),
      'not a bearer': { authorization: `Basic ${aliceToken}` },
      'a forged cookie': { cookie: 'sb_admin_session=alice.0.forged' },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const response = await get('/admin/whoami', from, headers);
      expect(response.statusCode, name).toBe(401);
      expect(response.json(), name).toMatchObject({ ok: false, error: 'UNAUTHORIZED' });
      expect(response.headers['www-authenticate'], name).toContain('Bearer');
      expect(response.body, name).not.toContain(aliceToken);
    }
    expect((await get('/admin/whoami', from, bearer(aliceToken))).json()).toMatchObject({ actor: 'alice' });
  });

  it('takes ?token= only on the events stream', async () => {
    expect((await get(`/admin/whoami?token=${aliceToken}`, freshAddress())).statusCode).toBe(401);
  });

  it('never counts a request without credentials as a guess', async () => {
    const from = freshAddress();
    for (let i = 0; i < 15; i++) expect((await get('/admin/whoami', from)).statusCode).toBe(401);
    expect((await get('/admin/whoami', from, bearer(aliceToken))).statusCode).toBe(200);
  });

  it('refuses an address after 10 wrong credentials, even with the right token, and only that address', async () => {
    const from = freshAddress();
    for (let i = 0; i < 10; i++) expect((await get('/admin/whoami', from, bearer(`wrong-${i}`))).statusCode).toBe(401);
    const blocked = await get('/admin/whoami', from, bearer(aliceToken));
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ ok: false, error: 'TOO_MANY_FAILURES' });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await get('/admin/whoami', freshAddress(), bearer(aliceToken))).statusCode).toBe(200);
  });

  it('refuses the session cookie from a foreign origin with 403', async () => {
    const from = freshAddress();
    const session = await app.inject({ method: 'POST', url: '/admin/session', remoteAddress: from, headers: bearer(aliceToken) });
    expect(session.statusCode).toBe(200);
    const cookie = String(session.headers['set-cookie']).split(';')[0] as string;
    expect((await get('/admin/whoami', from, { cookie })).json()).toMatchObject({ actor: 'alice' });
    const foreign = await app.inject({ method: 'POST', url: '/admin/conversations/999999/resume', remoteAddress: from, headers: { cookie, origin: 'http://evil.example' } });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toMatchObject({ ok: false, error: 'FORBIDDEN_ORIGIN' });
  });

  it('has no admin route at all when ADMIN_TOKEN is unset', async () => {
    for (const url of ['/admin/whoami', '/admin/', '/admin/openapi.json']) {
      expect((await plain.inject({ method: 'GET', url, headers: bearer(aliceToken) })).statusCode, url).toBe(404);
    }
  });
});
