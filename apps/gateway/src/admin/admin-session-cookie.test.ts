import { describe, expect, it } from 'vitest';
import { readCookie, sessionCookieName, signSessionCookie, verifySessionCookie } from './admin-session-cookie.ts';

describe('readCookie', () => {
  it('percent-decodes the named cookie', () => {
    expect(readCookie('a=1; sb_admin_session=x%2Ey; b=2', sessionCookieName)).toBe('x.y');
    expect(readCookie('a=1', sessionCookieName)).toBeUndefined();
  });

  it('returns a value that does not decode as sent, so it fails verification instead of throwing', () => {
    expect(readCookie('sb_admin_session=%E0%A4%A', sessionCookieName)).toBe('%E0%A4%A');
    const tokens = [{ name: 'alice', token: 'alice-0123456789abcdef' }];
    expect(verifySessionCookie(tokens, readCookie('sb_admin_session=%E0%A4%A', sessionCookieName))).toBeUndefined();
    const { value } = signSessionCookie(tokens[0]!);
    expect(verifySessionCookie(tokens, readCookie(`sb_admin_session=${encodeURIComponent(value)}`, sessionCookieName))?.name).toBe('alice');
  });
});
