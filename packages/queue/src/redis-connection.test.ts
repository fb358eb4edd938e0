import { describe, expect, it } from 'vitest';
import { redisReachOf } from './redis-connection.ts';

describe(redisReachOf.name, () => {
  it('reaches one Redis by URL unless a cluster or sentinels are named', () => {
    expect(redisReachOf({ REDIS_URL: 'redis://r:6379' })).toEqual({ mode: 'url', url: 'redis://r:6379' });
    expect(redisReachOf({ REDIS_URL: 'redis://r:6379', REDIS_CLUSTER_NODES: [], REDIS_SENTINELS: [] })).toEqual({ mode: 'url', url: 'redis://r:6379' });
  });

  it('parses cluster seed nodes and sentinels, IPv6 in brackets included', () => {
    expect(redisReachOf({ REDIS_URL: 'redis://:pw@x', REDIS_CLUSTER_NODES: ['10.0.0.1:7000', '[::1]:7001'] })).toEqual({
      mode: 'cluster',
      url: 'redis://:pw@x',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '::1', port: 7001 },
      ],
    });
    expect(redisReachOf({ REDIS_URL: 'redis://x', REDIS_SENTINELS: ['s1:26379'], REDIS_SENTINEL_NAME: 'sb' })).toEqual({
      mode: 'sentinel',
      url: 'redis://x',
      sentinels: [{ host: 's1', port: 26379 }],
      name: 'sb',
    });
  });
});
