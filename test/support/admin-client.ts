import { request as httpRequest } from 'node:http';
import { WebSocket } from 'ws';

/** Two named admin tokens, as ADMIN_TOKEN holds them (docs/admin.md). */
export const aliceToken = 'alice-0123456789abcdef';
export const bobToken = 'bob-fedcba9876543210';
export const adminTokenEnv = `alice:${aliceToken},bob:${bobToken}`;

export interface AdminResponse<T = unknown> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

export interface AdminRequestOptions {
  /** Bearer token; null sends no Authorization header. Default: alice's. */
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  /** Connect from this loopback address (rate limiting is per client address). */
  localAddress?: string;
}

/** One admin API call over real HTTP (node:http, so a test can pick its source address). */
export function adminRequest<T = Record<string, unknown>>(baseUrl: string, method: string, path: string, options: AdminRequestOptions = {}): Promise<AdminResponse<T>> {
  const url = new URL(path, baseUrl);
  const token = options.token === undefined ? aliceToken : options.token;
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
    ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, localAddress: options.localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        if (String(res.headers['content-type'] ?? '').includes('json') && text) body = JSON.parse(text);
        resolve({ status: res.statusCode ?? 0, body: body as T, headers: res.headers });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export interface StreamEvent {
  type: string;
  conversationId?: number | null;
  [key: string]: unknown;
}

export interface EventStreamClient {
  socket: WebSocket;
  /** Every event received so far, in order (the `stream.opened` greeting excluded). */
  events: StreamEvent[];
  /** Resolves with the first event (already received or still to come) after index `from` that matches. */
  waitFor(match: (event: StreamEvent) => boolean, timeoutMs?: number, from?: number): Promise<StreamEvent>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/** Opens GET /admin/events and resolves once the gateway has greeted it (from then on nothing is missed). */
export function openEventStream(baseUrl: string, options: { token?: string; query?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<EventStreamClient> {
  const url = new URL('/admin/events', baseUrl.replace(/^http/, 'ws'));
  for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
  const headers = { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...options.headers };
  const socket = new WebSocket(url, { headers });
  const events: StreamEvent[] = [];
  const waiters = new Set<() => void>();
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  return new Promise((resolve, reject) => {
    socket.on('unexpected-response', (req, res) => {
      // Handling this event makes closing the refused request our job (ws docs).
      req.destroy();
      reject(Object.assign(new Error(`upgrade refused with ${res.statusCode}`), { statusCode: res.statusCode }));
    });
    socket.on('error', reject);
    socket.on('message', (data) => {
      const event = JSON.parse(data.toString()) as StreamEvent;
      if (event.type === 'stream.opened') {
        resolve(client);
        return;
      }
      events.push(event);
      for (const wake of waiters) wake();
    });
    const client: EventStreamClient = {
      socket,
      events,
      closed,
      close: () => socket.close(),
      waitFor(match, timeoutMs = 15_000, from = 0) {
        return new Promise((resolveEvent, rejectEvent) => {
          const check = () => {
            const found = events.slice(from).find(match);
            if (!found) return false;
            waiters.delete(check);
            clearTimeout(timer);
            resolveEvent(found);
            return true;
          };
          const timer = setTimeout(() => {
            waiters.delete(check);
            rejectEvent(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.slice(-10))}`));
          }, timeoutMs);
          if (!check()) waiters.add(check);
        });
      },
    };
  });
}
