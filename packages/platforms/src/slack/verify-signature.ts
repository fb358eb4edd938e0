import { createHmac, timingSafeEqual } from 'node:crypto';
import { checkSignatureTimestamp, type SignatureTimestampFailure } from '../signature-window.ts';

export interface SlackSignatureInput {
  signingSecret: string;
  /** `X-Slack-Request-Timestamp`, Unix seconds; whatever arrived (possibly absent or an array). */
  timestamp: unknown;
  /** `X-Slack-Signature`, `v0=` + hex. */
  signature: unknown;
  /** The body exactly as received: a re-serialised JSON body would not match. */
  rawBody: string | Buffer;
  nowMs?: number;
}

export type SlackSignatureFailure = 'MISSING_HEADERS' | SignatureTimestampFailure | 'MALFORMED_SIGNATURE' | 'SIGNATURE_MISMATCH';

export type SlackSignatureResult = { ok: true } | { ok: false; reason: SlackSignatureFailure };

/**
 * Checks Slack's v0 request signature (Slack Events API docs): HMAC-SHA256 keyed
 * by the signing secret over `v0:{timestamp}:{rawBody}`, compared in constant
 * time over the raw bytes, with a ±5 minute window against replays. Never
 * throws: every bad input is a failure with a reason code for the log.
 */
export function verifySlackSignature(input: SlackSignatureInput): SlackSignatureResult {
  const { timestamp, signature } = input;
  if (typeof timestamp !== 'string' || typeof signature !== 'string' || timestamp === '' || signature === '') {
    return { ok: false, reason: 'MISSING_HEADERS' };
  }
  const stale = checkSignatureTimestamp(timestamp, input.nowMs ?? Date.now());
  if (stale) return { ok: false, reason: stale };
  if (!/^v0=[0-9a-fA-F]{64}$/.test(signature)) return { ok: false, reason: 'MALFORMED_SIGNATURE' };

  const provided = Buffer.from(signature.slice(3).toLowerCase(), 'hex');
  const expected = createHmac('sha256', input.signingSecret).update(`v0:${timestamp}:`).update(input.rawBody).digest();
  // Both are 32-byte digests here, so timingSafeEqual's length precondition holds.
  return provided.length === expected.length && timingSafeEqual(provided, expected) ? { ok: true } : { ok: false, reason: 'SIGNATURE_MISMATCH' };
}
