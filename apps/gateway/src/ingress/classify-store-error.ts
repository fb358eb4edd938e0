/** Why an inbound event could never be stored, however often it is re-delivered. */
export type InvalidInputReason = 'data_exception' | 'constraint_violation' | 'program_limit' | 'unencodable_key';

/** `invalid_input`: the event itself is at fault, so re-delivery fails the same way. `outage`: try again later. */
export type StoreFailure = { kind: 'invalid_input'; reason: InvalidInputReason; sqlState?: string } | { kind: 'outage' };

/** A duplicate event id: a re-delivery racing the first store, which succeeds as a duplicate when retried. */
const uniqueViolation = '23505';

/**
 * Tells a permanent data error from an outage (docs/guarantees.md). Postgres
 * SQLSTATE class 22 (data exception, e.g. 22021 NUL or bad UTF-8, 22P05 in
 * jsonb) and class 23 (integrity) other than the duplicate-key race are about
 * the row, as is 54000 (a value past a program limit); connection errors,
 * class 08, 53, 57 (57P01 admin shutdown) and anything unknown stay outages,
 * because retrying those is how a platform's re-delivery recovers.
 */
export function classifyStoreError(error: unknown): StoreFailure {
  // encodeURIComponent throws URIError on a lone surrogate in an id of the conversation key.
  if (error instanceof URIError) return { kind: 'invalid_input', reason: 'unencodable_key' };
  const sqlState = readSqlState(error);
  if (!sqlState) return { kind: 'outage' };
  if (sqlState.startsWith('22')) return { kind: 'invalid_input', reason: 'data_exception', sqlState };
  if (sqlState.startsWith('23') && sqlState !== uniqueViolation) return { kind: 'invalid_input', reason: 'constraint_violation', sqlState };
  if (sqlState === '54000') return { kind: 'invalid_input', reason: 'program_limit', sqlState };
  return { kind: 'outage' };
}

// postgres.js puts the SQLSTATE on `code` of a PostgresError; its own connection errors use words (CONNECTION_CLOSED), Node's use E-codes.
// A query through drizzle fails with a DrizzleQueryError whose `cause` is the PostgresError (the pairing store's, issue 30).
function readSqlState(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = 'code' in error ? (error as { code: unknown }).code : undefined;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('E')) return code;
  return depth < 2 && 'cause' in error ? readSqlState((error as { cause: unknown }).cause, depth + 1) : undefined;
}
