import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbClient, type DbClient } from '@switchboard/db';
import { useTestDbClient } from '@switchboard/db/testing';
import { getFreePort, redisUrl } from '@switchboard/harness/test-env';
import { registerHealthRoutes } from './health.ts';

// Readiness is what a load balancer or an orchestrator reads: each dependency
// is checked for real, and a dead one turns the answer into 503 naming it.
// Outages through the real processes: test/e2e/postgres-outage.e2e.test.ts.

const db = useTestDbClient();

describe('registerHealthRoutes', () => {
  let redis: Redis;
  // Never connected and no offline queue: every command fails at once, as with Redis down.
  let redisDown: Redis;
  // Nothing listens on its port: every query fails, as with Postgres down.
  let postgresDown: DbClient;
  const apps: FastifyInstance[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    redisDown = new Redis(redisUrl(), { lazyConnect: true, enableOfflineQueue: false });
    postgresDown = createDbClient(`postgres://nobody@127.0.0.1:${await getFreePort()}/none`, { max: 1, connectTimeoutSeconds: 1 });
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await postgresDown.close(0);
    redis.disconnect();
    redisDown.disconnect();
  });

  async function appWith(deps: Parameters<typeof registerHealthRoutes>[1]): Promise<FastifyInstance> {
    const app = Fastify();
    registerHealthRoutes(app, deps);
    await app.ready();
    apps.push(app);
    return app;
  }

  it('answers /healthz while the process runs, whatever its dependencies', async () => {
    const app = await appWith({ db: postgresDown.db, redis: redisDown });
    const response = await app.inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true });
  });

  it('answers /readyz 200 when Postgres and Redis both answer', async () => {
    const app = await appWith({ db: db.client.db, redis });
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true, checks: { postgres: true, redis: true } });
  });

  it('answers /readyz 503 naming the dependency that does not answer', async () => {
    const noRedis = await appWith({ db: db.client.db, redis: redisDown });
    const withoutRedis = await noRedis.inject({ method: 'GET', url: '/readyz' });
    expect(withoutRedis.statusCode).toBe(503);
    expect(withoutRedis.json()).toEqual({ ok: false, checks: { postgres: true, redis: false } });

    const noPostgres = await appWith({ db: postgresDown.db, redis });
    const withoutPostgres = await noPostgres.inject({ method: 'GET', url: '/readyz' });
    expect(withoutPostgres.statusCode).toBe(503);
    expect(withoutPostgres.json()).toEqual({ ok: false, checks: { postgres: false, redis: true } });
  });
});
