import { describe, expect, it } from 'vitest';
import { clientKeyOf, createFailureLimiter } from './failure-limiter.ts';

describe('clientKeyOf', () => {
  it('keeps an IPv4 address as it is, and reads an IPv4-mapped IPv6 address as that IPv4', () => {
    expect(clientKeyOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKeyOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKeyOf('::FFFF:cb00:7107')).toBe('203.0.113.7');
  });

  it('keys an IPv6 address by its /64, however it is written', () => {
    const key = '2001:db8:a:b::/64';
    for (const address of ['2001:db8:a:b::1', '2001:0db8:000a:000b:ffff:ffff:ffff:ffff', '2001:DB8:A:B:1:2:3:4', '2001:db8:a:b:0:0:1.2.3.4', '2001:db8:a:b::9%eth0']) {
      expect(clientKeyOf(address), address).toBe(key);
    }
    expect(clientKeyOf('2001:db8:a:c::1')).toBe('2001:db8:a:c::/64');
    expect(clientKeyOf('::1')).toBe('0:0:0:0::/64');
    expect(clientKeyOf('2001:db8::')).toBe('2001:db8:0:0::/64');
  });

  it('passes anything that is not an address through unchanged', () => {
    expect(clientKeyOf('')).toBe('');
    expect(clientKeyOf('not-an-address')).toBe('not-an-address');
  });
});

describe('createFailureLimiter', () => {
  it('blocks a key past the limit until its window ends, and no other key', () => {
    const limiter = createFailureLimiter({ maxFailures: 2, windowMs: 1000, maxAddresses: 10 });
    limiter.recordFailure('a', 0);
    expect(limiter.blockedForMs('a', 10)).toBe(0);
    limiter.recordFailure('a', 20);
    expect(limiter.blockedForMs('a', 30)).toBe(970);
    expect(limiter.blockedForMs('b', 30)).toBe(0);
    expect(limiter.blockedForMs('a', 1000)).toBe(0);
  });
});
