import { isRetryableCode, type ErrorCodeOf } from '@switchboard/core';
import { equalsConstantTime } from '@switchboard/platforms';

export interface AdminToken {
  /** Who acts, as written to the audit log. */
  name: string;
  token: string;
}

/** ADMIN_TOKEN that cannot be read: a start-up error of the `config` family of the catalog (docs/errors.md). */
export class AdminTokenError extends Error {
  readonly code: Extract<ErrorCodeOf<'config'>, 'ADMIN_TOKEN_INVALID'> = 'ADMIN_TOKEN_INVALID';
  /** From the catalog: false, the same ADMIN_TOKEN fails the same way. */
  readonly retryable = isRetryableCode(this.code);
  constructor(message: string) {
    super(`ADMIN_TOKEN ${message}`);
    this.name = 'AdminTokenError';
  }
}

const namePattern = /^[A-Za-z0-9_.-]{1,64}$/;
const tokenPattern = /^[^\s,:]{16,}$/;
/** The name of a token given without one. */
export const defaultAdminName = 'admin';

/**
 * ADMIN_TOKEN is one token (its actor name is `admin`) or a comma-separated
 * list of `name:token` pairs, e.g. `alice:6f1c…,ci:93ab…`, so each operator
 * or system has its own token and its own name in the audit log, and one can
 * be revoked without touching the others. Tokens are at least 16 characters
 * without spaces, commas or colons.
 */
export function parseAdminTokens(raw: string): AdminToken[] {
  const entries = raw.split(',').map((entry) => entry.trim());
  const tokens = entries.map((entry, index): AdminToken => {
    const colon = entry.indexOf(':');
    const name = colon === -1 ? defaultAdminName : entry.slice(0, colon);
    const token = colon === -1 ? entry : entry.slice(colon + 1);
    if (colon !== -1 && !namePattern.test(name)) throw new AdminTokenError(`entry ${index + 1}: the name must be 1-64 characters of A-Z a-z 0-9 _ . -`);
    if (!tokenPattern.test(token)) throw new AdminTokenError(`entry ${index + 1} (${name}): the token must be at least 16 characters without spaces, commas or colons`);
    return { name, token };
  });
  const names = new Set<string>();
  for (const { name } of tokens) {
    if (names.has(name)) throw new AdminTokenError(`names the actor "${name}" twice; give each token its own name (name:token)`);
    names.add(name);
  }
  return tokens;
}

/**
 * The token `provided` matches, compared in constant time against every
 * configured token (no early exit, so the time says nothing about which).
 */
export function findAdminToken(tokens: readonly AdminToken[], provided: string | undefined): AdminToken | undefined {
  let found: AdminToken | undefined;
  for (const candidate of tokens) {
    if (equalsConstantTime(provided, candidate.token) && !found) found = candidate;
  }
  return found;
}
