/**
 * The worker's proxy for its Codex children under
 * `CODEX_SANDBOX_NETWORK=provider` (docs/codex.md, "The child's network"):
 * an HTTP proxy on a Unix socket that only the sandboxes see (bound into
 * each; codex-net-bridge.ts carries the child's connections to it), passing
 * a CONNECT tunnel or an absolute-form request only to an allowed host and
 * port (the model provider, CODEX_SANDBOX_ALLOW_HOSTS) and refusing the rest
 * with 403. Written on node:http because its one job is that check: Node
 * hands over CONNECT and absolute-form requests as they are, and what a
 * proxy library adds (authentication, upstream chaining, rewriting) is what
 * must not be here.
 */
import { chmod, rm } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { isAllowedDestination, parseOrigin, type NetDestination } from './codex-provider-hosts.ts';

export interface CodexNetProxyOptions {
  socketPath: string;
  /** 0600, or 0666 where children run as other uids (a root worker's; the directory is unlisted, 0711). */
  socketMode?: number;
  allowed: readonly NetDestination[];
  /** Each refusal: the worker logs it (host and port only; a path may carry data). */
  onRefused?: (refusal: { host?: string; port?: number; how: 'connect' | 'request' }) => void;
}

export interface CodexNetProxy {
  socketPath: string;
  close(): Promise<void>;
}

const refusedBody = 'switchboard: a Codex child may reach only its model provider (docs/codex.md, "The child\'s network")\n';

/** Hop-by-hop headers: about the connection to the proxy, never passed on. */
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'upgrade']);

export async function startCodexNetProxy(options: CodexNetProxyOptions): Promise<CodexNetProxy> {
  const open = new Set<Duplex>();
  const track = (stream: Duplex) => {
    open.add(stream);
    stream.once('close', () => open.delete(stream));
  };
  const server = createServer((req, res) => forwardRequest(options, req, res, track));
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => openTunnel(options, { req, socket, head }, track));
  server.on('connection', track);
  // Bytes that are not HTTP: answered 400 and closed; nothing else is affected.
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  await rm(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => resolve());
  });
  await chmod(options.socketPath, options.socketMode ?? 0o600);
  return {
    socketPath: options.socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const stream of open) stream.destroy();
      }),
  };
}

function openTunnel(options: CodexNetProxyOptions, tunnel: { req: IncomingMessage; socket: Duplex; head: Buffer }, track: (stream: Duplex) => void): void {
  const { req, socket, head } = tunnel;
  socket.on('error', () => socket.destroy());
  const dest = parseOrigin(`tcp://${req.url ?? ''}`);
  if (!dest || !isAllowedDestination(options.allowed, dest)) {
    options.onRefused?.({ host: dest?.host, port: dest?.port, how: 'connect' });
    socket.end(`HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(refusedBody)}\r\n\r\n${refusedBody}`);
    return;
  }
  const upstream = connect(dest.port, dest.host);
  track(upstream);
  let opened = false;
  upstream.once('connect', () => {
    opened = true;
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    socket.pipe(upstream);
    upstream.pipe(socket);
  });
  upstream.on('error', () => {
    if (socket.writable && !opened) socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
    upstream.destroy();
  });
  socket.once('close', () => upstream.destroy());
}

function forwardRequest(options: CodexNetProxyOptions, req: IncomingMessage, res: ServerResponse, track: (stream: Duplex) => void): void {
  const url = req.url ?? '';
  const dest = url.startsWith('http://') ? parseOrigin(url) : undefined;
  if (!dest || !isAllowedDestination(options.allowed, dest)) {
    options.onRefused?.({ host: dest?.host, port: dest?.port, how: 'request' });
    res.writeHead(dest ? 403 : 400, { 'content-type': 'text/plain', connection: 'close' }).end(dest ? refusedBody : 'switchboard: this proxy takes absolute http:// requests and CONNECT only\n');
    return;
  }
  const target = new URL(url);
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !hopByHop.has(name)));
  const upstream = request({ host: dest.host, port: dest.port, method: req.method, path: `${target.pathname}${target.search}`, headers });
  upstream.on('socket', track);
  upstream.on('response', (answer) => {
    const answerHeaders = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !hopByHop.has(name)));
    res.writeHead(answer.statusCode ?? 502, answerHeaders);
    answer.pipe(res);
  });
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { connection: 'close' }).end();
    else res.destroy();
  });
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}
