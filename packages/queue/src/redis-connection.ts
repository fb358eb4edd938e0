import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

export type RedisRole = 'worker' | 'producer' | 'subscriber';

/** A connection to one Redis (direct or found through Sentinel) or to a Redis Cluster: the same commands either way. */
export type RedisClient = Redis | Cluster;

interface HostPort {
  host: string;
  port: number;
}

/**
 * Where Redis is (docs/services.md, "Redis Cluster and Sentinel"): one URL,
 * a cluster's seed nodes, or sentinels and the master's name. With a
 * cluster or sentinels, REDIS_URL still gives the password, database and TLS.
 */
export type RedisReach =
  | { mode: 'url'; url: string }
  | { mode: 'cluster'; url: string; nodes: HostPort[] }
  | { mode: 'sentinel'; url: string; sentinels: HostPort[]; name: string };

export interface RedisReachSettings {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES?: string[];
  REDIS_SENTINELS?: string[];
  REDIS_SENTINEL_NAME?: string | undefined;
}

export function redisReachOf(settings: RedisReachSettings): RedisReach {
  const url = settings.REDIS_URL;
  if (settings.REDIS_CLUSTER_NODES?.length) return { mode: 'cluster', url, nodes: settings.REDIS_CLUSTER_NODES.map(parseHostPort) };
  if (settings.REDIS_SENTINELS?.length) return { mode: 'sentinel', url, sentinels: settings.REDIS_SENTINELS.map(parseHostPort), name: settings.REDIS_SENTINEL_NAME ?? 'mymaster' };
  return { mode: 'url', url };
}

function parseHostPort(entry: string): HostPort {
  const colon = entry.lastIndexOf(':');
  return { host: entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(colon + 1)) };
}

/** Password, user, database and TLS from a redis:// URL, for the nodes a cluster or a sentinel names. */
export function redisCredentialsOf(url: string): RedisOptions {
  const parsed = new URL(url);
  const db = Number(parsed.pathname.slice(1) || '0');
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(db > 0 ? { db } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * BullMQ's production guidance: connections that block (workers, subscribers)
 * retry forever (`maxRetriesPerRequest: null`); connections that only add jobs
 * fail fast while Redis is down (`enableOfflineQueue: false`) so the gateway
 * can answer 503 and let the platform retry instead of hanging the webhook.
 */
export function createRedisConnection(reach: RedisReach | string, role: RedisRole, extra: RedisOptions = {}): RedisClient {
  const where: RedisReach = typeof reach === 'string' ? { mode: 'url', url: reach } : reach;
  const base: RedisOptions =
    role === 'producer'
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 }
      : { maxRetriesPerRequest: null, enableOfflineQueue: true };
  const options: RedisOptions = { ...base, retryStrategy: (times) => Math.min(times * 100, 2000), lazyConnect: false, ...extra };
  if (where.mode === 'url') return new Redis(where.url, options);
  if (where.mode === 'sentinel') {
    // ioredis asks the sentinels for the master and asks again after a failover (a READONLY reply also reconnects).
    return new Redis({ ...redisCredentialsOf(where.url), ...options, sentinels: where.sentinels, name: where.name, sentinelRetryStrategy: (times) => Math.min(times * 100, 2000) });
  }
  return new Cluster(where.nodes, clusterOptions(where.url, role, options));
}

/**
 * A master's failover takes its replica about node-timeout plus a second to
 * take over; a command meanwhile is retried on a refreshed slot table instead
 * of failing (retryDelayOnFailover × maxRedirections ≈ 20 s for connections
 * that block; producers give up sooner, as against one Redis, and the gateway
 * answers 503). Sharded subscribers: SSUBSCRIBE reaches the channel's shard.
 */
function clusterOptions(url: string, role: RedisRole, options: RedisOptions): ClusterOptions {
  const { enableOfflineQueue, maxRetriesPerRequest: _perRequest, retryStrategy: _retry, lazyConnect, ...nodeOptions } = options;
  return {
    redisOptions: { ...redisCredentialsOf(url), ...nodeOptions, maxRetriesPerRequest: role === 'producer' ? 1 : null },
    enableOfflineQueue,
    lazyConnect,
    retryDelayOnFailover: 300,
    retryDelayOnClusterDown: 300,
    maxRedirections: role === 'producer' ? 16 : 64,
    clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
    shardedSubscribers: role === 'subscriber',
    slotsRefreshInterval: 5_000,
  };
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/**
 * BullMQ's key prefix. A cluster runs a script only on keys of one slot, and
 * every BullMQ script touches several keys of its queue, so there the prefix
 * is a hash tag: the whole queue lives in one slot (docs/services.md). One
 * Redis keeps the plain prefix, so existing queues are found after an upgrade.
 */
export function bullPrefix(prefix: string, client: RedisClient): string {
  return isCluster(client) ? `{${prefix}}:bull` : `${prefix}:bull`;
}
