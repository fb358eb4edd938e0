import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisPrefix, redisUrl } from '../../../test/support/test-env.ts';
import { createRedisLease } from './redis-lease.ts';
import { runAsLeader, type RunAsLeaderOptions } from './run-as-leader.ts';
import type { LeaseHold, LeaseLoss } from './run-while-leased.ts';

/** Resolves when the signal aborts (at once if it has). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

describe('runAsLeader', () => {
  const prefix = createRedisPrefix();
  let redis: Redis;
  let keys = 0;
  const nextKey = () => `${prefix}:test-leader:${++keys}`;

  beforeAll(() => {
    redis = new Redis(redisUrl());
  });
  afterAll(() => {
    redis.disconnect();
  });

  /** A loop that leads until its signal aborts, counting its terms. */
  function startLeader(key: string, options: Partial<RunAsLeaderOptions> = {}) {
    const stop = new AbortController();
    const terms: LeaseHold[] = [];
    const lease = createRedisLease(redis, key, 300);
    const running = runAsLeader({
      lease,
      stop: stop.signal,
      renewEveryMs: 50,
      lead: async (hold) => {
        terms.push(hold);
        await aborted(hold.signal);
      },
      ...options,
    });
    return { lease, terms, running, stop: () => (stop.abort(), running) };
  }

  it('leads from one loop only; the other takes over within a retry period once the leader stops, and the lease is given back', async () => {
    const key = nextKey();
    let notTaken = 0;
    const first = startLeader(key);
    await expect.poll(() => first.terms.length, { interval: 10, timeout: 2_000 }).toBe(1);
    const second = startLeader(key, { onNotTaken: () => notTaken++ });
    await expect.poll(() => notTaken, { interval: 10, timeout: 2_000 }).toBeGreaterThanOrEqual(2);
    expect(second.terms).toHaveLength(0);

    await first.stop();
    expect(first.terms[0]?.signal.aborted).toBe(true);
    await expect.poll(() => second.terms.length, { interval: 10, timeout: 2_000 }).toBe(1);
    expect(await redis.get(key)).toBe(second.lease.owner);
    await second.stop();
    expect(await redis.get(key)).toBeNull();
  });

  it('ends the term when another owner takes the lease, waits while it holds it, and leads again once it is free', async () => {
    const key = nextKey();
    const losses: LeaseLoss[] = [];
    const leader = startLeader(key, { onLost: (loss) => losses.push(loss) });
    await expect.poll(() => leader.terms.length, { interval: 10, timeout: 2_000 }).toBe(1);

    await redis.set(key, 'another-process', 'PX', 60_000);
    await aborted(leader.terms[0]!.signal);
    expect(losses).toEqual(['refused']);
    // Several retry periods: no second term while the other owner holds it.
    await expect.poll(() => redis.pttl(key), { interval: 50, timeout: 2_000 }).toBeLessThan(59_700);
    expect(leader.terms).toHaveLength(1);

    await redis.del(key);
    await expect.poll(() => leader.terms.length, { interval: 10, timeout: 2_000 }).toBe(2);
    await leader.stop();
  });

  it('keeps the term going through a vanished key when asked to retake it, claiming it again', async () => {
    const key = nextKey();
    let claims = 0;
    let retaken = 0;
    const leader = startLeader(key, { retakeVanished: true, claim: async () => ++claims > 0, onRetaken: () => retaken++ });
    await expect.poll(() => leader.terms.length, { interval: 10, timeout: 2_000 }).toBe(1);

    await redis.del(key); // Redis restarted empty
    await expect.poll(() => retaken, { interval: 10, timeout: 2_000 }).toBe(1);
    expect(await redis.get(key)).toBe(leader.lease.owner);
    expect(leader.terms).toHaveLength(1);
    expect(leader.terms[0]?.signal.aborted).toBe(false);
    expect(claims).toBe(2);
    await leader.stop();
  });

  it('leads again at once, not after a retry period, when a term ends with the key free', async () => {
    const key = nextKey();
    // A retry period far longer than the test: a second term can only come from the at-once retry.
    const leader = startLeader(key, { retryEveryMs: 60_000 });
    await expect.poll(() => leader.terms.length, { interval: 10, timeout: 2_000 }).toBe(1);

    await redis.del(key);
    await aborted(leader.terms[0]!.signal);
    await expect.poll(() => leader.terms.length, { interval: 10, timeout: 2_000 }).toBe(2);
    await leader.stop();
  });

  it('reports a failed term to onError and tries again; without onError the failure ends the loop, the lease given back', async () => {
    const key = nextKey();
    const errors: unknown[] = [];
    let calls = 0;
    const lead = async (hold: LeaseHold) => {
      if (++calls === 1) throw new Error('takeover step failed');
      await aborted(hold.signal);
    };
    const leader = startLeader(key, { lead, retryEveryMs: 20, onError: (err) => errors.push(err) });
    await expect.poll(() => calls, { interval: 10, timeout: 2_000 }).toBe(2);
    expect(errors).toEqual([new Error('takeover step failed')]);
    await leader.stop();

    const failing = startLeader(nextKey(), {
      lead: async () => {
        throw new Error('takeover step failed');
      },
    });
    await expect(failing.running).rejects.toThrow('takeover step failed');
    expect(await redis.get(failing.lease.key)).toBeNull();
  });
});
