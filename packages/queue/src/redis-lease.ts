import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * One named lease in Redis with an owner token: `SET key owner NX PX ttl` to
 * take it, compare-and-pexpire to keep it, compare-and-delete to give it back.
 * Used for every "one holder cluster-wide" job: a conversation's turns, the
 * Discord gateway connection, the Telegram poller. A holder that dies stops
 * renewing and the lease is free again within one TTL.
 */
export interface RedisLease {
  readonly key: string;
  readonly owner: string;
  readonly ttlMs: number;
  tryAcquire(): Promise<boolean>;
  /** False when the lease is no longer ours (expired, and maybe taken by another process). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

/** The conversation lease (docs/turns.md): whoever holds it runs the conversation's turns. */
export function conversationLeaseKey(prefix: string, conversationId: number): string {
  return `${prefix}:lease:conversation:${conversationId}`;
}

const renewScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const releaseScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export function createRedisLease(redis: Redis, key: string, ttlMs: number): RedisLease {
  const owner = randomUUID();
  return {
    key,
    owner,
    ttlMs,
    async tryAcquire() {
      return (await redis.set(key, owner, 'PX', ttlMs, 'NX')) === 'OK';
    },
    async renew() {
      return (await redis.eval(renewScript, 1, key, owner, String(ttlMs))) === 1;
    },
    async release() {
      await redis.eval(releaseScript, 1, key, owner);
    },
  };
}
