import { Redis, type RedisOptions } from 'ioredis';

export type RedisRole = 'worker' | 'producer' | 'subscriber';

/**
 * BullMQ's production guidance: connections that block (workers, subscribers)
 * retry forever (`maxRetriesPerRequest: null`); connections that only add jobs
 * fail fast while Redis is down (`enableOfflineQueue: false`) so the gateway
 * can answer 503 and let the platform retry instead of hanging the webhook.
 */
export function createRedisConnection(url: string, role: RedisRole, extra: RedisOptions = {}): Redis {
  const base: RedisOptions =
    role === 'producer'
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 }
      : { maxRetriesPerRequest: null, enableOfflineQueue: true };
  return new Redis(url, {
    ...base,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    lazyConnect: false,
    ...extra,
  });
}
