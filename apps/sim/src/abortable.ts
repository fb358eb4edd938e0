import type { EventEmitter } from 'node:events';

/**
 * Resolves true after `ms`, or false as soon as `signal` aborts. Never rejects:
 * callers only need to know whether to go on writing.
 */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when `signal` aborts (never, if it never does). */
export function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** What a waiter listens to (`eventName` on `emitter`) and how long it waits. */
export interface WaitOptions {
  emitter: EventEmitter;
  eventName: string;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * Re-evaluates `check` each time `emitter` emits `eventName` and resolves with
 * its first defined result; resolves undefined on timeout or abort. Event
 * driven, so a waiter wakes the moment the thing it waits for is recorded.
 */
export function waitUntil<T>(check: () => T | undefined, options: WaitOptions): Promise<T | undefined> {
  const { emitter, eventName, timeoutMs, signal } = options;
  const immediate = check();
  if (immediate !== undefined || signal.aborted || timeoutMs <= 0) return Promise.resolve(immediate);
  return new Promise((resolve) => {
    const finish = (value: T | undefined) => {
      clearTimeout(timer);
      emitter.off(eventName, onEvent);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onEvent = () => {
      const value = check();
      if (value !== undefined) finish(value);
    };
    const onAbort = () => finish(undefined);
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    emitter.on(eventName, onEvent);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
