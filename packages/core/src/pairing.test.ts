import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decidePairingRequest, generatePairingCode, isPairingExpired, normalisePairingCode, pairingAlphabet, pairingRules, renderPairingCodeNotice } from './pairing.ts';

const now = new Date('2026-11-27T10:00:00Z');
const minutes = (n: number) => new Date(now.getTime() + n * 60_000);

describe('pairing codes', () => {
  it('are 8 characters of the unambiguous alphabet, and differ', () => {
    const codes = Array.from({ length: 200 }, () => generatePairingCode());
    for (const code of codes) expect(code).toMatch(/^[A-HJKMNP-Z2-9]{8}$/);
    expect(new Set(codes).size).toBe(codes.length);
    expect(pairingAlphabet).not.toMatch(/[01OIL]/);
  });

  it('read back whatever case and separators an operator types, and refuse what cannot be a code', () => {
    expect(normalisePairingCode('abcd-2345')).toBe('ABCD2345');
    expect(normalisePairingCode(' ABCD 2345 ')).toBe('ABCD2345');
    expect(normalisePairingCode('ABCD234')).toBeNull();
    expect(normalisePairingCode('ABCD2340')).toBeNull();
    expect(normalisePairingCode('ABCDI345')).toBeNull();
    fc.assert(fc.property(fc.constant(null).map(() => generatePairingCode()), (code) => normalisePairingCode(code.toLowerCase()) === code));
  });

  it('expire at their time, not after', () => {
    expect(isPairingExpired(minutes(1), now)).toBe(false);
    expect(isPairingExpired(now, now)).toBe(true);
  });

  it('are shown with the minutes left', () => {
    expect(renderPairingCodeNotice('ABCD2345', minutes(60), now)).toMatch(/pairing code ABCD2345 \(it expires in 60 minutes\)/);
    expect(renderPairingCodeNotice('ABCD2345', minutes(0.2), now)).toMatch(/in 1 minute\)/);
  });
});

describe('decidePairingRequest', () => {
  it('issues a code good for an hour to a new user while the platform has room', () => {
    expect(decidePairingRequest({ pending: null, pendingOnPlatform: 2, now })).toEqual({ kind: 'issue', expiresAt: minutes(60) });
  });

  it('evicts the oldest pending code for a new user when the platform already has the most pending', () => {
    expect(decidePairingRequest({ pending: null, pendingOnPlatform: pairingRules.maxPendingPerPlatform, now })).toEqual({ kind: 'evict_oldest', expiresAt: minutes(60) });
  });

  it('gives a denied user nothing for a day, then a code again', () => {
    expect(decidePairingRequest({ pending: null, pendingOnPlatform: 0, deniedAt: minutes(-60), now })).toEqual({ kind: 'denied' });
    expect(decidePairingRequest({ pending: null, pendingOnPlatform: 0, deniedAt: minutes(-24 * 60), now })).toEqual({ kind: 'issue', expiresAt: minutes(60) });
  });

  it('keeps the same code for a user who asks again: silence for ten minutes after telling, then a reminder', () => {
    const pending = { code: 'ABCD2345', expiresAt: minutes(50), lastToldAt: minutes(-9) };
    expect(decidePairingRequest({ pending, pendingOnPlatform: 3, now })).toEqual({ kind: 'quiet' });
    expect(decidePairingRequest({ pending: { ...pending, lastToldAt: minutes(-10) }, pendingOnPlatform: 3, now })).toEqual({ kind: 'remind', code: 'ABCD2345', expiresAt: minutes(50) });
  });

  it('treats an expired code as none: a new one if there is room', () => {
    const pending = { code: 'ABCD2345', expiresAt: now, lastToldAt: minutes(-60) };
    expect(decidePairingRequest({ pending, pendingOnPlatform: 0, now })).toEqual({ kind: 'issue', expiresAt: minutes(60) });
  });

  it('never issues while the user has a live code, whatever the platform count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 59 }), fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 10 }), (left, since, count) => {
        const decision = decidePairingRequest({ pending: { code: 'ABCD2345', expiresAt: minutes(left), lastToldAt: minutes(-since) }, pendingOnPlatform: count, now });
        return decision.kind === 'quiet' || decision.kind === 'remind';
      }),
    );
  });
});
