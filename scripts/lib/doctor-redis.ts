import { Cluster, Redis } from 'ioredis';
import { redisCredentialsOf, redisReachOf, type RedisReach } from '@switchboard/queue';
import { describeUrl, readSetting, type CheckResult } from './doctor-checks.ts';

const timeoutMs = 5000;
const once = { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false } as const;

/**
 * The `redis` line of `npm run doctor`: one Redis (REDIS_URL), a cluster
 * (REDIS_CLUSTER_NODES: every slot served, each master's eviction policy) or
 * the master the sentinels name (REDIS_SENTINELS). Tried once, never retried.
 */
export async function checkRedis(env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const url = readSetting(env, 'REDIS_URL');
  if (!url) return { name: 'redis', status: 'skip', detail: 'REDIS_URL is invalid' };
  const reach = redisReachOf({
    REDIS_URL: url,
    REDIS_CLUSTER_NODES: readSetting<string[]>(env, 'REDIS_CLUSTER_NODES') ?? [],
    REDIS_SENTINELS: readSetting<string[]>(env, 'REDIS_SENTINELS') ?? [],
    REDIS_SENTINEL_NAME: readSetting(env, 'REDIS_SENTINEL_NAME'),
  });
  const where = describeReach(reach);
  const fix = reach.mode === 'url' ? 'start Redis (npm run services -- start) or correct REDIS_URL' : `check ${reach.mode === 'cluster' ? 'REDIS_CLUSTER_NODES' : 'REDIS_SENTINELS and REDIS_SENTINEL_NAME'} and REDIS_URL's password`;
  const client = reach.mode === 'cluster' ? connectCluster(reach) : connectOne(reach);
  client.on('error', () => undefined);
  try {
    await client.connect();
    const servers = client instanceof Cluster ? client.nodes('master') : [client];
    const facts = await Promise.all(servers.map(readServer));
    if (client instanceof Cluster) {
      const state = /cluster_state:(\w+)/.exec(String(await client.cluster('INFO')))?.[1];
      if (state !== 'ok') return { name: 'redis', status: 'fail', detail: `${where}: cluster_state ${state ?? 'unknown'}`, fix: 'every slot must be served: check the cluster (redis-cli --cluster check)' };
    }
    const evicting = facts.filter((f) => f.policy !== undefined && f.policy !== 'noeviction');
    const summary = `Redis ${facts[0]?.version ?? 'unknown'} at ${where}${facts[0]?.policy ? `, maxmemory-policy ${facts[0].policy}` : ''}`;
    if (evicting.length > 0) {
      return { name: 'redis', status: 'warn', detail: `${summary}; ${evicting.length} of ${facts.length} evict (${evicting[0]?.policy})`, fix: 'set maxmemory-policy noeviction on every node: BullMQ loses jobs when Redis evicts keys' };
    }
    return { name: 'redis', status: 'ok', detail: summary };
  } catch (error) {
    return { name: 'redis', status: 'fail', detail: `cannot reach ${where}: ${(error as Error).message}`, fix };
  } finally {
    client.disconnect();
  }
}

function describeReach(reach: RedisReach): string {
  if (reach.mode === 'url') return describeUrl(reach.url);
  if (reach.mode === 'cluster') return `the cluster of ${reach.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  return `the master "${reach.name}" of sentinels ${reach.sentinels.map((n) => `${n.host}:${n.port}`).join(',')}`;
}

function connectOne(reach: Exclude<RedisReach, { mode: 'cluster' }>): Redis {
  if (reach.mode === 'url') return new Redis(reach.url, once);
  return new Redis({ ...redisCredentialsOf(reach.url), ...once, sentinels: reach.sentinels, name: reach.name, sentinelRetryStrategy: () => null });
}

function connectCluster(reach: Extract<RedisReach, { mode: 'cluster' }>): Cluster {
  const { enableOfflineQueue, lazyConnect, ...node } = once;
  return new Cluster(reach.nodes, { redisOptions: { ...redisCredentialsOf(reach.url), ...node }, enableOfflineQueue, lazyConnect, clusterRetryStrategy: () => null });
}

async function readServer(server: Redis): Promise<{ version: string; policy: string | undefined }> {
  const version = /redis_version:(\S+)/.exec(await server.info('server'))?.[1] ?? 'unknown';
  try {
    return { version, policy: ((await server.config('GET', 'maxmemory-policy')) as string[])[1] };
  } catch {
    // CONFIG is often disabled on managed Redis; the policy then cannot be checked from here.
    return { version, policy: undefined };
  }
}
