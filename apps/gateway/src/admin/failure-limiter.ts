export interface FailureLimiter {
  /** Milliseconds until the address may try again, or 0 if it may now. */
  blockedForMs(address: string, now?: number): number;
  recordFailure(address: string, now?: number): void;
  readonly size: number;
}

export interface FailureLimiterOptions {
  /** Failures allowed per window before the address is blocked until the window ends. */
  maxFailures: number;
  windowMs: number;
  /** Addresses remembered at most; beyond that the oldest are forgotten, so a flood cannot grow memory. */
  maxAddresses: number;
}

/**
 * Failed admin authentications per client address in fixed windows. A
 * blocked address is refused even with a right token, so guessing cannot go
 * on at full speed from one place.
 */
export function createFailureLimiter(options: FailureLimiterOptions): FailureLimiter {
  const windows = new Map<string, { startedAt: number; failures: number }>();

  function prune(now: number): void {
    for (const [address, window] of windows) {
      if (now - window.startedAt >= options.windowMs) windows.delete(address);
    }
    // Still full: forget the oldest entries (Map iterates in insertion order).
    for (const address of windows.keys()) {
      if (windows.size < options.maxAddresses) break;
      windows.delete(address);
    }
  }

  return {
    blockedForMs(address, now = Date.now()) {
      const window = windows.get(address);
      if (!window) return 0;
      const endsIn = window.startedAt + options.windowMs - now;
      if (endsIn <= 0) {
        windows.delete(address);
        return 0;
      }
      return window.failures >= options.maxFailures ? endsIn : 0;
    },
    recordFailure(address, now = Date.now()) {
      const window = windows.get(address);
      if (window && now - window.startedAt < options.windowMs) {
        window.failures += 1;
        return;
      }
      windows.delete(address);
      if (windows.size >= options.maxAddresses) prune(now);
      windows.set(address, { startedAt: now, failures: 1 });
    },
    get size() {
      return windows.size;
    },
  };
}
