import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A lifecycle-event webhook receiver for the tests (docs/restarts.md, "Lifecycle events"): a plain
 * node:http server on a free loopback port that verifies every request's
 * signature the way a customer would (written here from the documented
 * scheme, not with the worker's signing code), records it, and answers 500
 * while told to fail.
 */

export interface ReceivedEvent {
  id: number;
  type: string;
  conversationId: number;
  sessionId?: number;
  turnId?: number;
  outcome?: string;
  reason?: string;
  at: string;
}

export interface WebhookRequest {
  /** Arrival order over all requests. */
  seq: number;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  event: ReceivedEvent | undefined;
  /** The signature header matches `v0=` + HMAC-SHA256(secret, `v0:{timestamp}:{body}`). */
  signatureValid: boolean;
  /** The timestamp header, in seconds, minus the receiver's clock at arrival. */
  timestampSkewS: number;
  /** What the receiver answered. */
  status: number;
}

/** Verifies a request as a receiver should: the HMAC over the timestamp and the raw body, compared in constant time. */
export function verifySignature(secret: string, timestamp: string | undefined, rawBody: string, signature: string | undefined): boolean {
  if (!timestamp || !signature) return false;
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface WebhookReceiver {
  url: string;
  requests: WebhookRequest[];
  /** Requests answered 2xx, in arrival order. */
  accepted(): WebhookRequest[];
  /** While true every request is answered 500 (and recorded). */
  failing: boolean;
  /** Resolves when `predicate` holds for the recorded requests (checked on every arrival). */
  waitFor(what: string, predicate: (requests: WebhookRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(secret: string): Promise<WebhookReceiver> {
  const requests: WebhookRequest[] = [];
  const listeners = new Set<() => void>();
  const receiver: WebhookReceiver = {
    url: '',
    requests,
    failing: false,
    accepted: () => requests.filter((r) => r.status >= 200 && r.status < 300),
    waitFor(what, predicate, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(requests)) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`webhook receiver: no ${what} within ${timeoutMs} ms; got ${JSON.stringify(requests.map((r) => [r.event?.id, r.event?.type, r.status]))}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const timestamp = header(request.headers, 'x-switchboard-request-timestamp');
      let event: ReceivedEvent | undefined;
      try {
        event = JSON.parse(rawBody) as ReceivedEvent;
      } catch {
        event = undefined;
      }
      const signatureValid = verifySignature(secret, timestamp, rawBody, header(request.headers, 'x-switchboard-signature'));
      const status = !signatureValid || !event ? 401 : receiver.failing ? 500 : 200;
      requests.push({
        seq: requests.length + 1,
        path: request.url ?? '',
        headers: request.headers,
        rawBody,
        event,
        signatureValid,
        timestampSkewS: Number(timestamp) - Date.now() / 1000,
        status,
      });
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no');
      for (const listener of [...listeners]) listener();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/switchboard`;
  return receiver;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
