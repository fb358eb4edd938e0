import type { RedisClient } from '@switchboard/queue';
import { outboxClaimId } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { conversationLeaseKey, createRedisLease, releaseLeasesOfHolder, runWhileLeased, type LeasedRun } from '@switchboard/queue';

/** One holding of a conversation's lease, as the turn and the delivery see it. */
export interface LeaseHolding {
  /** Renews the lease; false once it is no longer this holding's. */
  confirm(): Promise<boolean>;
  /** The outbox claim id of this holding (outboxClaimId): rows it commits or sends are claimed under it. */
  claimId: string;
}

/** A holding as its work loop sees it: `lost` aborts once the lease is lost, and stays aborted. */
export interface ConversationHolding extends LeaseHolding {
  lost: AbortSignal;
}

export interface LeaseManager {
  /**
   * Runs `work` holding the conversation's lease, renewed every third of its
   * TTL and released when the work ends; `not_taken` (the work does not run)
   * while another holder has it. `onLost` is the caller's reaction to losing
   * it: a renewal refused, or renewals failing (Redis down) for a whole TTL.
   */
  runHeld<T>(conversationId: number, work: (holding: ConversationHolding) => Promise<T>, onLost?: () => void): Promise<LeasedRun<T>>;
  /** Gives back every lease a worker found dead still holds; returns their conversations. */
  releaseAllOf(deadWorkerId: string): Promise<number[]>;
}

export interface LeaseManagerOptions {
  prefix: string;
  ttlMs: number;
  /** Starts every owner token, so a dead worker's leases are given back by prefix (releaseAllOf). */
  workerId: string;
  log: Logger;
}

/**
 * The cluster-wide "one running turn per conversation" lease (docs/turns.md).
 * It expires by itself if its worker dies, so a crashed worker blocks a
 * conversation for at most one TTL; and as soon as a sweep declares that
 * worker dead, its leases are given back (releaseAllOf), so recovery waits
 * for the heartbeat silence, not the TTL.
 */
export function createLeaseManager(redis: RedisClient, options: LeaseManagerOptions): LeaseManager {
  const { prefix, ttlMs, workerId, log } = options;
  return {
    runHeld(conversationId, work, onLost) {
      const lease = createRedisLease(redis, conversationLeaseKey(prefix, conversationId), ttlMs, workerId);
      return runWhileLeased(lease, (hold) => work({ confirm: () => hold.confirm(), claimId: outboxClaimId(workerId, hold.owner), lost: hold.signal }), {
        onLost,
        onRenewError: (err) => log.warn({ err, conversationId }, 'lease renewal failed'),
      });
    },
    releaseAllOf: (deadWorkerId) => releaseLeasesOfHolder(redis, prefix, deadWorkerId),
  };
}
