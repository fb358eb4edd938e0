import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisPrefix, redisUrl } from '../../../test/support/test-env.ts';
import { createRedisLease, type RedisLease } from './redis-lease.ts';
import { runWhileLeased, type LeaseLoss } from './run-while-leased.ts';

describe('runWhileLeased', () => {
  const prefix = createRedisPrefix();
  let redis: Redis;
  let keys = 0;
  const nextKey = () => `${prefix}:test-lease:${++keys}`;

  beforeAll(() => {
    redis = new Redis(redisUrl());
  });
  afterAll(() => {
    redis.disconnect();
  });

  it('does not run the work while another holder has the lease', async () => {
    const key = nextKey();
    const other = createRedisLease(redis, key, 5_000);
    expect(await other.tryAcquire()).toBe(true);
    let ran = false;
    const run = await runWhileLeased(createRedisLease(redis, key, 5_000), async () => {
      ran = true;
    });
    expect(run).toEqual({ kind: 'not_taken' });
    expect(ran).toBe(false);
    expect(await redis.get(key)).toBe(other.owner);
  });

  it('keeps the lease past its TTL while the work runs, and releases it when the work is done', async () => {
    const key = nextKey();
    const lease = createRedisLease(redis, key, 300, 'worker-a');
    const run = await runWhileLeased(lease, async (hold) => {
      expect(hold.owner).toMatch(/^worker-a\//);
      await sleep(800);
      expect(await redis.get(key)).toBe(lease.owner);
      expect(await hold.confirm()).toBe(true);
      return 'done';
    });
    expect(run).toEqual({ kind: 'finished', value: 'done', lost: undefined });
    expect(await redis.get(key)).toBeNull();
  });

  it('reports a lease taken by another owner once, aborts the signal, and leaves the other owner\'s lease in place', async () => {
    const key = nextKey();
    const losses: LeaseLoss[] = [];
    const run = await runWhileLeased(
      createRedisLease(redis, key, 300),
      async (hold) => {
        // Another process took over (this one's lease had expired, say).
        await redis.set(key, 'someone-else', 'PX', 5_000);
        await new Promise((resolve) => hold.signal.addEventListener('abort', resolve, { once: true }));
        expect(await hold.confirm()).toBe(false);
        // Renewals stop with the loss: it is reported once.
        await sleep(300);
        return hold.signal.aborted;
      },
      { renewEveryMs: 50, onLost: (loss) => losses.push(loss) },
    );
    expect(run).toEqual({ kind: 'finished', value: true, lost: 'refused' });
    expect(losses).toEqual(['refused']);
    expect(await redis.get(key)).toBe('someone-else');
  });

  it('takes a vanished lease back and claims it again when asked, without a loss', async () => {
    const key = nextKey();
    let claims = 0;
    let retaken = 0;
    const lease = createRedisLease(redis, key, 300);
    const run = await runWhileLeased(
      lease,
      async (hold) => {
        await redis.del(key); // Redis restarted empty
        await expect.poll(() => retaken, { interval: 20, timeout: 2_000 }).toBe(1);
        expect(await redis.get(key)).toBe(lease.owner);
        return hold.signal.aborted;
      },
      { renewEveryMs: 50, retakeVanished: true, claim: async () => ++claims > 0, onRetaken: () => retaken++ },
    );
    expect(run).toEqual({ kind: 'finished', value: false, lost: undefined });
    expect(claims).toBe(2);
  });

  it('loses a vanished lease when not asked to take it back', async () => {
    const key = nextKey();
    const run = await runWhileLeased(
      createRedisLease(redis, key, 300),
      async (hold) => {
        await redis.del(key);
        await new Promise((resolve) => hold.signal.addEventListener('abort', resolve, { once: true }));
      },
      { renewEveryMs: 50 },
    );
    expect(run).toMatchObject({ kind: 'finished', lost: 'refused' });
  });

  it('gives the lease back and does not run the work when the claim is refused', async () => {
    const key = nextKey();
    let ran = false;
    const run = await runWhileLeased(
      createRedisLease(redis, key, 5_000),
      async () => {
        ran = true;
      },
      { claim: async () => false },
    );
    expect(run).toEqual({ kind: 'not_taken' });
    expect(ran).toBe(false);
    expect(await redis.get(key)).toBeNull();
  });

  it('gives the lease back when the claim throws, and rethrows', async () => {
    const key = nextKey();
    const claiming = runWhileLeased(createRedisLease(redis, key, 5_000), async () => 'ran', {
      claim: async () => {
        throw new Error('postgres down');
      },
    });
    await expect(claiming).rejects.toThrow('postgres down');
    expect(await redis.get(key)).toBeNull();
  });

  it('releases the lease when the work throws, and rethrows', async () => {
    const key = nextKey();
    const failing = runWhileLeased(createRedisLease(redis, key, 5_000), async () => {
      throw new Error('work failed');
    });
    await expect(failing).rejects.toThrow('work failed');
    expect(await redis.get(key)).toBeNull();
  });

  it('counts renewals that fail for a whole TTL as a loss, and reports each failure', async () => {
    const real = createRedisLease(redis, nextKey(), 200);
    const unreachable: RedisLease = { ...real, tryAcquire: () => real.tryAcquire(), release: () => real.release(), renew: () => Promise.reject(new Error('redis down')) };
    const errors: unknown[] = [];
    const losses: LeaseLoss[] = [];
    const run = await runWhileLeased(
      unreachable,
      async (hold) => {
        await new Promise((resolve) => hold.signal.addEventListener('abort', resolve, { once: true }));
      },
      { renewEveryMs: 50, onRenewError: (err) => errors.push(err), onLost: (loss) => losses.push(loss) },
    );
    expect(run).toMatchObject({ kind: 'finished', lost: 'unconfirmed' });
    expect(losses).toEqual(['unconfirmed']);
    // Failures within the TTL are only reported: the run went on through them.
    expect(errors.length).toBeGreaterThanOrEqual(3);
  });

  it('hands a failed release to onReleaseError instead of throwing', async () => {
    const real = createRedisLease(redis, nextKey(), 5_000);
    const stuck: RedisLease = { ...real, tryAcquire: () => real.tryAcquire(), renew: () => real.renew(), release: () => Promise.reject(new Error('redis down')) };
    const errors: unknown[] = [];
    const run = await runWhileLeased(stuck, async () => 'ok', { onReleaseError: (err) => errors.push(err) });
    expect(run).toEqual({ kind: 'finished', value: 'ok', lost: undefined });
    expect(errors).toHaveLength(1);
    await real.release();
    await expect(runWhileLeased(stuck, async () => 'ok')).rejects.toThrow('redis down');
    await real.release();
  });
});
