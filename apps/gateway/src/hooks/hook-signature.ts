import { createHmac } from 'node:crypto';
import { equalsConstantTime } from '@switchboard/platforms';

/** `X-Switchboard-Signature` for these exact bytes: `sha256=` and the lower-case hex HMAC-SHA256 of the raw body under the hook's secret. */
export function signHookBody(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Whether the header is the body's signature; compared in constant time (DESIGN §4), absent or repeated is false. */
export function verifyHookSignature(secret: string, body: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  return equalsConstantTime(header, signHookBody(secret, body));
}
