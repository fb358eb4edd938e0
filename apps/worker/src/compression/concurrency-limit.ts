/** Gives back a slot taken from a ConcurrencyLimit; calling it twice gives back one slot. */
export type ReleaseSlot = () => void;

export interface ConcurrencyLimit {
  /**
   * Waits for a free slot, first come first served. Resolves null, without a
   * slot, if `signal` aborts while waiting.
   */
  acquire(signal?: AbortSignal): Promise<ReleaseSlot | null>;
  /** Slots taken now, and callers waiting for one (for logs and tests). */
  usage(): { running: number; waiting: number };
}

interface Waiter {
  grant(release: ReleaseSlot): void;
}

/**
 * An in-process counting semaphore. Compression takes a slot before it
 * reserves a Postgres connection for its lock (docs/compression.md), so at
 * most `limit` connections of the pool are ever held that way.
 */
export function createConcurrencyLimit(limit: number): ConcurrencyLimit {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a concurrency limit must be a positive integer, got ${limit}`);
  let running = 0;
  const waiting: Waiter[] = [];

  const makeRelease = (): ReleaseSlot => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiting.shift();
      // The slot passes straight to the next waiter: no one can jump the queue in between.
      if (next) next.grant(makeRelease());
      else running--;
    };
  };

  return {
    async acquire(signal) {
      if (signal?.aborted) return null;
      if (running < limit) {
        running++;
        return makeRelease();
      }
      return new Promise<ReleaseSlot | null>((resolve) => {
        const onAbort = () => {
          const index = waiting.indexOf(waiter);
          if (index >= 0) waiting.splice(index, 1);
          resolve(null);
        };
        const waiter: Waiter = {
          grant(release) {
            signal?.removeEventListener('abort', onAbort);
            resolve(release);
          },
        };
        waiting.push(waiter);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    usage: () => ({ running, waiting: waiting.length }),
  };
}
