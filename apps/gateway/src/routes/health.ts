import type { FastifyInstance } from 'fastify';
import type { RedisClient } from '@switchboard/queue';
import { pingDatabase, type Database } from '@switchboard/db';

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerHealthRoutes(app: FastifyInstance, deps: { db: Database; redis: RedisClient }): void {
  app.get('/healthz', async () => ({ ok: true }));

  app.get('/readyz', async (_request, reply) => {
    const [postgres, redis] = await Promise.allSettled([withTimeout(pingDatabase(deps.db), 1000), withTimeout(deps.redis.ping(), 1000)]);
    const checks = { postgres: postgres.status === 'fulfilled', redis: redis.status === 'fulfilled' };
    const ok = checks.postgres && checks.redis;
    return reply.code(ok ? 200 : 503).send({ ok, checks });
  });
}
