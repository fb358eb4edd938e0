import { describe, expect, it } from 'vitest';
import { createConcurrencyLimit } from './concurrency-limit.ts';

describe('createConcurrencyLimit', () => {
  it('never lets more than the limit run, and serves waiters in order', async () => {
    const limit = createConcurrencyLimit(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const work = async (n: number) => {
      const release = await limit.acquire();
      if (!release) throw new Error('no slot');
      running++;
      most = Math.max(most, running);
      order.push(n);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      release();
    };
    await Promise.all(Array.from({ length: 9 }, (_, n) => work(n)));
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(limit.usage()).toEqual({ running: 0, waiting: 0 });
  });

  it('gives back one slot however often release is called', async () => {
    const limit = createConcurrencyLimit(1);
    const first = await limit.acquire();
    first?.();
    first?.();
    const second = await limit.acquire();
    expect(limit.usage()).toEqual({ running: 1, waiting: 0 });
    const third = limit.acquire();
    expect(limit.usage()).toEqual({ running: 1, waiting: 1 });
    second?.();
    expect(await third).toEqual(expect.any(Function));
  });

  it('an aborted wait gets no slot and leaves the queue', async () => {
    const limit = createConcurrencyLimit(1);
    const held = await limit.acquire();
    const controller = new AbortController();
    const waiting = limit.acquire(controller.signal);
    controller.abort();
    expect(await waiting).toBeNull();
    expect(limit.usage()).toEqual({ running: 1, waiting: 0 });
    held?.();
    expect(limit.usage()).toEqual({ running: 0, waiting: 0 });
    expect(await limit.acquire(controller.signal)).toBeNull();
  });
});
