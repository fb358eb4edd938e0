import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface Lease {
  conversationId: number;
  token: string;
}

export interface LeaseManager {
  acquire(conversationId: number): Promise<Lease | null>;
  /** Extends the lease; false if it was lost (expired and taken by another worker). */
  renew(lease: Lease): Promise<boolean>;
  release(lease: Lease): Promise<void>;
  ttlMs: number;
}

// Written by hand because the lease is one Redis key with an owner token:
// compare-and-delete and compare-and-extend are two three-line Lua scripts,
// and the lock libraries (redlock) target multi-master quorum we do not run.
const renewScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const releaseScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * The cluster-wide "one running turn per conversation" lease (DESIGN §5).
 * It expires by itself if its worker dies, so a crashed worker blocks a
 * conversation for at most one TTL.
 */
export function createLeaseManager(redis: Redis, prefix: string, ttlMs = 30_000): LeaseManager {
  const keyOf = (conversationId: number) => `${prefix}:lease:conversation:${conversationId}`;
  return {
    ttlMs,
    async acquire(conversationId) {
      const token = randomUUID();
      const ok = await redis.set(keyOf(conversationId), token, 'PX', ttlMs, 'NX');
      return ok === 'OK' ? { conversationId, token } : null;
    },
    async renew(lease) {
      const result = await redis.eval(renewScript, 1, keyOf(lease.conversationId), lease.token, String(ttlMs));
      return result === 1;
    },
    async release(lease) {
      await redis.eval(releaseScript, 1, keyOf(lease.conversationId), lease.token);
    },
  };
}
