import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signHookBody, verifyHookSignature } from './hook-signature.ts';

describe('hook signatures', () => {
  const secret = 'a-hook-secret-of-some-length';
  const body = Buffer.from('{"build":"failed"}');
  const good = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

  describe(verifyHookSignature.name, () => {
    it('takes the HMAC-SHA256 of the raw body, sha256=<hex>', () => {
      expect(signHookBody(secret, body)).toBe(good);
      expect(verifyHookSignature(secret, body, good)).toBe(true);
    });

    it('refuses a missing, repeated, other-body, other-key, upper-case or prefix-less signature', () => {
      expect(verifyHookSignature(secret, body, undefined)).toBe(false);
      expect(verifyHookSignature(secret, body, [good, good])).toBe(false);
      expect(verifyHookSignature(secret, Buffer.from('{"build":"passed"}'), good)).toBe(false);
      expect(verifyHookSignature('another-secret-entirely', body, good)).toBe(false);
      expect(verifyHookSignature(secret, body, good.toUpperCase())).toBe(false);
      expect(verifyHookSignature(secret, body, good.slice('sha256='.length))).toBe(false);
    });
  });
});
