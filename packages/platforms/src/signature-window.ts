/**
 * How far a signed request's timestamp may be from now, either way, before
 * the request is refused as a replay: Slack's documented window, used for
 * Discord's interactions too (issue 17, defect 9). A signature proves who
 * sent the bytes, not when; without the window a captured request verifies
 * forever.
 */
export const signatureMaxAgeMs = 5 * 60 * 1000;

export type SignatureTimestampFailure = 'MALFORMED_TIMESTAMP' | 'STALE_TIMESTAMP';

/** A signature header's timestamp (Unix seconds, as Slack and Discord send it) against the window; undefined when it is fresh. */
export function checkSignatureTimestamp(timestamp: string, nowMs: number): SignatureTimestampFailure | undefined {
  if (!/^\d{1,12}$/.test(timestamp)) return 'MALFORMED_TIMESTAMP';
  return Math.abs(nowMs - Number(timestamp) * 1000) > signatureMaxAgeMs ? 'STALE_TIMESTAMP' : undefined;
}
