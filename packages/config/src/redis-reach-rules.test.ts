import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './load-config.ts';
import { gatewayEnvSchema, workerEnvSchema } from './schemas.ts';

describe('how Redis is reached (REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS)', () => {
  it('takes a cluster or sentinels as host:port lists', () => {
    const cluster = parseConfig(workerEnvSchema, { MODEL_BASE_URL: 'http://m/v1', REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-1.internal:7001 ' });
    expect(cluster.REDIS_CLUSTER_NODES).toEqual(['10.0.0.1:7000', 'redis-1.internal:7001']);
    expect(cluster.REDIS_SENTINELS).toEqual([]);
    const sentinel = parseConfig(gatewayEnvSchema, { REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_NAME: 'switchboard' });
    expect(sentinel.REDIS_SENTINELS).toEqual(['s1:26379', 's2:26379']);
    expect(sentinel.REDIS_SENTINEL_NAME).toBe('switchboard');
  });

  it('refuses a bad entry, sentinels without the master name, and a cluster and sentinels at once', () => {
    expect(messageOf(() => parseConfig(workerEnvSchema, { MODEL_BASE_URL: 'http://m/v1', REDIS_CLUSTER_NODES: 'redis-1' }))).toMatch(/REDIS_CLUSTER_NODES(\.0)? must be comma-separated host:port entries/);
    expect(messageOf(() => parseConfig(workerEnvSchema, { MODEL_BASE_URL: 'http://m/v1', REDIS_SENTINELS: 's1:26379' }))).toMatch(/REDIS_SENTINEL_NAME is required when REDIS_SENTINELS is set/);
    expect(messageOf(() => parseConfig(gatewayEnvSchema, { REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 's:2', REDIS_SENTINEL_NAME: 'm' }))).toMatch(
      /REDIS_SENTINELS must not be set together with REDIS_CLUSTER_NODES/,
    );
    expect(messageOf(() => parseConfig(gatewayEnvSchema, { REDIS_SENTINELS: 's:2', REDIS_SENTINEL_NAME: 'my master' }))).toMatch(/REDIS_SENTINEL_NAME must be 1-64 characters/);
  });
});

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
