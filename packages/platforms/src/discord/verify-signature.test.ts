import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyDiscordSignature } from './verify-signature.ts';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
// The raw 32-byte key, hex, as the Developer Portal shows it.
const publicKeyHex = Buffer.from((publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url').toString('hex');

function signed(timestamp: string, body: string) {
  return sign(null, Buffer.from(timestamp + body), privateKey).toString('hex');
}

describe('verifyDiscordSignature', () => {
  const timestamp = '1700000000';
  const nowMs = Number(timestamp) * 1000;
  const rawBody = '{"type":1,"id":"1"}';

  it('accepts Ed25519 over timestamp + raw body, as a string or a Buffer', () => {
    const signatureHex = signed(timestamp, rawBody);
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex, timestamp, rawBody })).toEqual({ ok: true });
    expect(verifyDiscordSignature({ nowMs, publicKeyHex: publicKeyHex.toUpperCase(), signatureHex, timestamp, rawBody: Buffer.from(rawBody) })).toEqual({ ok: true });
  });

  it('rejects a changed body, timestamp or key', () => {
    const signatureHex = signed(timestamp, rawBody);
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex, timestamp, rawBody: '{"type":1,"id":"2"}' })).toEqual({ ok: false, reason: 'SIGNATURE_MISMATCH' });
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex, timestamp: '1700000001', rawBody })).toEqual({ ok: false, reason: 'SIGNATURE_MISMATCH' });
    const other = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as { x: string };
    const otherHex = Buffer.from(other.x, 'base64url').toString('hex');
    expect(verifyDiscordSignature({ nowMs, publicKeyHex: otherHex, signatureHex, timestamp, rawBody })).toEqual({ ok: false, reason: 'SIGNATURE_MISMATCH' });
    // Re-serialised JSON is a different byte string.
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex, timestamp, rawBody: JSON.stringify(JSON.parse(rawBody), null, 1) }).ok).toBe(false);
  });

  it('never throws on bad input', () => {
    const signatureHex = signed(timestamp, rawBody);
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex: undefined, timestamp, rawBody })).toEqual({ ok: false, reason: 'MISSING_HEADERS' });
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex: [signatureHex], timestamp, rawBody })).toEqual({ ok: false, reason: 'MISSING_HEADERS' });
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex, timestamp: '', rawBody })).toEqual({ ok: false, reason: 'MISSING_HEADERS' });
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex: 'zz'.repeat(64), timestamp, rawBody })).toEqual({ ok: false, reason: 'MALFORMED_SIGNATURE' });
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex: signatureHex.slice(2), timestamp, rawBody })).toEqual({ ok: false, reason: 'MALFORMED_SIGNATURE' });
    expect(verifyDiscordSignature({ nowMs, publicKeyHex: 'not-a-key', signatureHex, timestamp, rawBody })).toEqual({ ok: false, reason: 'BAD_PUBLIC_KEY' });
    expect(verifyDiscordSignature({ nowMs, publicKeyHex: '00'.repeat(31), signatureHex, timestamp, rawBody })).toEqual({ ok: false, reason: 'BAD_PUBLIC_KEY' });
    expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex: '00'.repeat(64), timestamp, rawBody })).toEqual({ ok: false, reason: 'SIGNATURE_MISMATCH' });
  });

  it('refuses a right signature whose timestamp is more than 5 minutes from now, either way', () => {
    for (const [offsetSeconds, verdict] of [
      [-301, { ok: false, reason: 'STALE_TIMESTAMP' }],
      [-300, { ok: true }],
      [300, { ok: true }],
      [301, { ok: false, reason: 'STALE_TIMESTAMP' }],
      [-86_400 * 365, { ok: false, reason: 'STALE_TIMESTAMP' }],
    ] as const) {
      const ts = String(Number(timestamp) + offsetSeconds);
      expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex: signed(ts, rawBody), timestamp: ts, rawBody }), String(offsetSeconds)).toEqual(verdict);
    }
    for (const ts of ['1700000000.5', '-1700000000', ' 1700000000', '17e8', '1'.repeat(13)]) {
      expect(verifyDiscordSignature({ nowMs, publicKeyHex, signatureHex: signed(ts, rawBody), timestamp: ts, rawBody }), ts).toEqual({ ok: false, reason: 'MALFORMED_TIMESTAMP' });
    }
  });
});
