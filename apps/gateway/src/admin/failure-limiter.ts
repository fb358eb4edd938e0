import { isIP } from 'node:net';

export interface FailureLimiter {
  /** Milliseconds until the address may try again, or 0 if it may now. Callers pass `clientKeyOf(request.ip)`. */
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

/**
 * The limiter's key for a client address (request.ip, which behind a trusted
 * proxy is the client's own, TRUST_PROXY): an IPv4 address as it is, an
 * IPv4-mapped IPv6 address as the IPv4 it carries, and an IPv6 address as its
 * /64. One host or home gets a whole /64 and may use a fresh address for
 * every request, so counting single IPv6 addresses would not limit it at all.
 */
export function clientKeyOf(address: string): string {
  const bare = address.split('%', 1)[0]?.toLowerCase() ?? '';
  if (isIP(bare) !== 6) return address;
  const hextets = expandIpv6(bare);
  if (hextets.slice(0, 5).every((hextet) => hextet === 0) && hextets[5] === 0xffff) {
    const [high = 0, low = 0] = hextets.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${hextets.slice(0, 4).map((hextet) => hextet.toString(16)).join(':')}::/64`;
}

/** The eight hextets of a valid IPv6 address ('::' filled in, an IPv4 tail read as two hextets). */
function expandIpv6(address: string): number[] {
  const toHextets = (part: string) =>
    (part === '' ? [] : part.split(':')).flatMap((group) => {
      if (!group.includes('.')) return [Number.parseInt(group, 16)];
      const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  const [head = '', tail] = address.split('::');
  const headHextets = toHextets(head);
  const tailHextets = tail === undefined ? [] : toHextets(tail);
  return [...headHextets, ...Array.from({ length: 8 - headHextets.length - tailHextets.length }, () => 0), ...tailHextets];
}
