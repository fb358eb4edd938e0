import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { checkSignatureTimestamp, type SignatureTimestampFailure } from '../signature-window.ts';

export interface DiscordSignatureInput {
  /** The application's public key from the Developer Portal: 64 hex characters (32 raw bytes). */
  publicKeyHex: string;
  /** `X-Signature-Ed25519`: 128 hex characters; whatever arrived (possibly absent or an array). */
  signatureHex: unknown;
  /** `X-Signature-Timestamp` (Unix seconds), signed as the prefix of the body; refused outside the replay window. */
  timestamp: unknown;
  /** The body exactly as received: a re-serialised JSON body would not verify. */
  rawBody: string | Buffer;
  nowMs?: number;
}

export type DiscordSignatureFailure = 'MISSING_HEADERS' | SignatureTimestampFailure | 'MALFORMED_SIGNATURE' | 'BAD_PUBLIC_KEY' | 'SIGNATURE_MISMATCH';

export type DiscordSignatureResult = { ok: true } | { ok: false; reason: DiscordSignatureFailure };

// An Ed25519 SubjectPublicKeyInfo is this fixed 12-byte DER header followed by
// the 32 raw key bytes (RFC 8410), which is how node:crypto accepts a raw key.
const ed25519SpkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');
const keyCache = new Map<string, KeyObject | null>();

/**
 * Discord's interaction signature (Discord interactions docs): Ed25519 over
 * `timestamp + rawBody` with the application's public key, and the timestamp
 * within ±5 minutes of now, as Slack's check has (Discord documents no
 * window, but without one a captured interaction verifies forever). Never throws:
 * every bad input is a failure with a reason for the log. Ed25519 verification
 * does not depend on secret data, so no constant-time comparison is involved.
 */
export function verifyDiscordSignature(input: DiscordSignatureInput): DiscordSignatureResult {
  const { signatureHex, timestamp } = input;
  if (typeof signatureHex !== 'string' || typeof timestamp !== 'string' || signatureHex === '' || timestamp === '') {
    return { ok: false, reason: 'MISSING_HEADERS' };
  }
  const stale = checkSignatureTimestamp(timestamp, input.nowMs ?? Date.now());
  if (stale) return { ok: false, reason: stale };
  if (!/^[0-9a-fA-F]{128}$/.test(signatureHex)) return { ok: false, reason: 'MALFORMED_SIGNATURE' };
  const key = readPublicKey(input.publicKeyHex);
  if (!key) return { ok: false, reason: 'BAD_PUBLIC_KEY' };
  const body = typeof input.rawBody === 'string' ? Buffer.from(input.rawBody, 'utf8') : input.rawBody;
  const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), body]);
  try {
    return verify(null, signed, key, Buffer.from(signatureHex, 'hex')) ? { ok: true } : { ok: false, reason: 'SIGNATURE_MISMATCH' };
  } catch {
    return { ok: false, reason: 'SIGNATURE_MISMATCH' };
  }
}

function readPublicKey(publicKeyHex: string): KeyObject | null {
  const cached = keyCache.get(publicKeyHex);
  if (cached !== undefined) return cached;
  let key: KeyObject | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(publicKeyHex)) {
    try {
      key = createPublicKey({ key: Buffer.concat([ed25519SpkiPrefix, Buffer.from(publicKeyHex, 'hex')]), format: 'der', type: 'spki' });
    } catch {
      key = null;
    }
  }
  // One application has one key; the cache stays tiny, but bound it anyway.
  if (keyCache.size > 16) keyCache.clear();
  keyCache.set(publicKeyHex, key);
  return key;
}
