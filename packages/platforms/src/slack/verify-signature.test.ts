import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySlackSignature } from './verify-signature.ts';

const signingSecret = '8f742231b10e8888abcd99yyyzzz85a5';
const nowMs = 1_531_420_618_000;
const timestamp = String(nowMs / 1000);
const rawBody = '{"token":"x","type":"event_callback","event":{"type":"message","text":"héllo <@U1>"}}';

function sign(body: string, ts: string, secret = signingSecret): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
}

describe('verifySlackSignature', () => {
  it('accepts the signature Slack computes over v0:{timestamp}:{raw body}', () => {
    expect(verifySlackSignature({ signingSecret, timestamp, signature: sign(rawBody, timestamp), rawBody, nowMs })).toEqual({ ok: true });
    expect(verifySlackSignature({ signingSecret, timestamp, signature: sign(rawBody, timestamp), rawBody: Buffer.from(rawBody), nowMs })).toEqual({ ok: true });
    expect(verifySlackSignature({ signingSecret, timestamp, signature: sign(rawBody, timestamp).toUpperCase().replace('V0=', 'v0='), rawBody, nowMs })).toEqual({ ok: true });
  });

  it('matches the worked example in Slack’s documentation', () => {
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const signature = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
    expect(verifySlackSignature({ signingSecret, timestamp: '1531420618', signature, rawBody: body, nowMs })).toEqual({ ok: true });
  });

  it('rejects a changed body, a wrong secret and a signature for another timestamp', () => {
    const signature = sign(rawBody, timestamp);
    expect(verifySlackSignature({ signingSecret, timestamp, signature, rawBody: `${rawBody} `, nowMs })).toEqual({ ok: false, reason: 'SIGNATURE_MISMATCH' });
    expect(verifySlackSignature({ signingSecret, timestamp, signature: sign(rawBody, timestamp, 'other'), rawBody, nowMs })).toEqual({ ok: false, reason: 'SIGNATURE_MISMATCH' });
    const other = String(Number(timestamp) + 1);
    expect(verifySlackSignature({ signingSecret, timestamp: other, signature, rawBody, nowMs })).toEqual({ ok: false, reason: 'SIGNATURE_MISMATCH' });
  });

  it('rejects a timestamp more than 5 minutes away in either direction, even when correctly signed', () => {
    for (const offsetS of [-301, 301, -3600, 86_400]) {
      const ts = String(Number(timestamp) + offsetS);
      expect(verifySlackSignature({ signingSecret, timestamp: ts, signature: sign(rawBody, ts), rawBody, nowMs })).toEqual({ ok: false, reason: 'STALE_TIMESTAMP' });
    }
    for (const offsetS of [-300, 299]) {
      const ts = String(Number(timestamp) + offsetS);
      expect(verifySlackSignature({ signingSecret, timestamp: ts, signature: sign(rawBody, ts), rawBody, nowMs })).toEqual({ ok: true });
    }
  });

  it('answers malformed or missing headers with a reason, never an exception', () => {
    const signature = sign(rawBody, timestamp);
    const cases: Array<[unknown, unknown, string]> = [
      [undefined, signature, 'MISSING_HEADERS'],
      [timestamp, undefined, 'MISSING_HEADERS'],
      ['', signature, 'MISSING_HEADERS'],
      [[timestamp, timestamp], signature, 'MISSING_HEADERS'],
      ['12.5', signature, 'MALFORMED_TIMESTAMP'],
      ['-1', signature, 'MALFORMED_TIMESTAMP'],
      ['1531420618abc', signature, 'MALFORMED_TIMESTAMP'],
      [timestamp, 'v1=' + signature.slice(3), 'MALFORMED_SIGNATURE'],
      [timestamp, signature.slice(0, -2), 'MALFORMED_SIGNATURE'],
      [timestamp, `${signature}00`, 'MALFORMED_SIGNATURE'],
      [timestamp, 'v0=' + 'zz'.repeat(32), 'MALFORMED_SIGNATURE'],
    ];
    for (const [ts, sig, reason] of cases) {
      expect(verifySlackSignature({ signingSecret, timestamp: ts, signature: sig, rawBody, nowMs })).toEqual({ ok: false, reason });
    }
  });
});
