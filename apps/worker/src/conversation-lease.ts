import type { Redis } from 'ioredis';
import { conversationLeaseKey, createRedisLease, releaseLeasesOfHolder, type RedisLease } from '@switchboard/queue';

export interface Lease {
  conversationId: number;
  lease: RedisLease;
}

/** One holding of a conversation's lease, as the turn and the delivery see it. */
export interface LeaseHolding {
  /** Renews the lease; false once it is no longer this holding's. */
  confirm(): Promise<boolean>;
  /** The outbox claim id of this holding (outboxClaimId): rows it commits or sends are claimed under it. */
  claimId: string;
}

export interface LeaseManager {
  acquire(conversationId: number): Promise<Lease | null>;
  /** Extends the lease; false if it was lost (expired and taken by another worker). */
  renew(lease: Lease): Promise<boolean>;
  release(lease: Lease): Promise<void>;
  /** Gives back every lease a worker found dead still holds; returns their conversations. */
  releaseAllOf(deadWorkerId: string): Promise<number[]>;
  ttlMs: number;
}

/**
 * The cluster-wide "one running turn per conversation" lease (docs/turns.md).
 * It expires by itself if its worker dies, so a crashed worker blocks a
 * conversation for at most one TTL; and as soon as a sweep declares that
 * worker dead, its leases are given back (releaseAllOf), so recovery waits
 * for the heartbeat silence, not the TTL.
 */
export function createLeaseManager(redis: Redis, prefix: string, ttlMs = 30_000, workerId?: string): LeaseManager {
  return {
    ttlMs,
    async acquire(conversationId) {
      const lease = createRedisLease(redis, conversationLeaseKey(prefix, conversationId), ttlMs, workerId);
      return (await lease.tryAcquire()) ? { conversationId, lease } : null;
    },
    renew: (held) => held.lease.renew(),
    release: (held) => held.lease.release(),
    releaseAllOf: (deadWorkerId) => releaseLeasesOfHolder(redis, prefix, deadWorkerId),
  };
}
