import { createHmac } from 'node:crypto';
import { equalsConstantTime } from '@switchboard/platforms';
import type { AdminToken } from './admin-tokens.ts';

export const sessionCookieName = 'sb_admin_session';
/** A browser session lasts a working day; after that the operator signs in again. */
export const sessionLifetimeMs = 8 * 3600 * 1000;

/**
 * Browsers cannot put a Bearer header on a page navigation or a WebSocket,
 * so the console, the API docs and bull-board run on a cookie that
 * POST /admin/session hands out to a caller who showed a token. The cookie
 * holds `name.expiry.mac`, the MAC keyed by that token: it never carries the
 * token itself, expires on its own, and dies when the token is rotated.
 */
export function signSessionCookie(token: AdminToken, now = Date.now()): { value: string; expiresAt: number } {
  const expiresAt = now + sessionLifetimeMs;
  const payload = `${token.name}.${expiresAt}`;
  return { value: `${payload}.${mac(token.token, payload)}`, expiresAt };
}

/** The token whose session the cookie proves, if it is well-formed, unexpired and signed by a configured token. */
export function verifySessionCookie(tokens: readonly AdminToken[], value: string | undefined, now = Date.now()): AdminToken | undefined {
  if (!value) return undefined;
  const parts = value.split('.');
  if (parts.length < 3) return undefined;
  const signature = parts.pop() as string;
  const expiresAt = Number(parts.pop());
  const name = parts.join('.');
  if (!Number.isFinite(expiresAt) || expiresAt <= now) return undefined;
  const token = tokens.find((candidate) => candidate.name === name);
  if (!token) return undefined;
  return equalsConstantTime(signature, mac(token.token, `${name}.${expiresAt}`)) ? token : undefined;
}

/**
 * The named cookie's value, percent-decoded. A value that does not decode
 * (`%E0%A4%A`) is returned as sent rather than thrown: it then fails
 * verification like any wrong cookie, so it gets a 401 and counts against
 * the client address instead of ending as a 500.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return decodeCookieValue(part.slice(eq + 1).trim());
  }
  return undefined;
}

function decodeCookieValue(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * Whether the session cookie gets `Secure`: `auto` when the client's scheme
 * is https, which behind a TLS proxy is what X-Forwarded-Proto says, read
 * only when TRUST_PROXY trusts that proxy (issue 17, defect 7).
 */
export function isSecureCookie(setting: 'auto' | 'always' | 'never', clientProtocol: string): boolean {
  return setting === 'always' || (setting === 'auto' && clientProtocol === 'https');
}

export function formatSessionCookie(value: string, options: { maxAgeSeconds: number; secure: boolean }): string {
  return [
    `${sessionCookieName}=${encodeURIComponent(value)}`,
    'Path=/admin',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${options.maxAgeSeconds}`,
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

function mac(key: string, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}
