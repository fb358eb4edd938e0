import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCodexNetProxy, type CodexNetProxy } from './codex-net-proxy.ts';
import type { NetDestination } from './codex-provider-hosts.ts';

// The worker's proxy over a real Unix socket and real upstream servers: what a Codex child's request through it gets.

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** An echo of method, path and body: the allowed provider, or a server the child must not reach. */
const echo = (name: string) =>
  createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => res.writeHead(200, { 'x-upstream': name }).end(`${name} ${req.method} ${req.url} ${body}`));
  });

/** One HTTP request to the proxy's socket, as the bridge would pass it on. */
function send(proxy: CodexNetProxy, options: { method?: string; path: string; body?: string }): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: proxy.socketPath, method: options.method ?? 'GET', path: options.path, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A CONNECT, then (when it opens) one request through the tunnel: the status and what came back. */
function tunnel(proxy: CodexNetProxy, target: string): Promise<{ status: number; through?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: proxy.socketPath, method: 'CONNECT', path: target, agent: false });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) return (socket.destroy(), resolve({ status: res.statusCode ?? 0 }));
      let through = '';
      socket.on('data', (chunk: Buffer) => (through += chunk.toString()));
      socket.on('end', () => resolve({ status: 200, through }));
      socket.write('GET /in-tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the Codex children’s proxy (CODEX_SANDBOX_NETWORK=provider)', () => {
  let dir: string;
  let proxy: CodexNetProxy;
  const provider = echo('provider');
  const other = echo('other');
  let ports: { provider: number; other: number; closed: number };
  const refused: { host?: string; port?: number; how: string }[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-net-proxy-'));
    const closedServer = createServer();
    ports = { provider: await listen(provider), other: await listen(other), closed: await listen(closedServer) };
    await new Promise((resolve) => closedServer.close(resolve));
    const allowed: NetDestination[] = [{ host: '127.0.0.1', port: ports.provider }, { host: '127.0.0.1', port: ports.closed }];
    proxy = await startCodexNetProxy({ socketPath: join(dir, 'proxy.sock'), allowed, onRefused: (refusal) => refused.push(refusal) });
  });
  afterAll(async () => {
    await proxy?.close();
    provider.close();
    other.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('passes a request to the provider on, body and answer whole, without the proxy’s own headers', async () => {
    const answer = await send(proxy, { method: 'POST', path: `http://127.0.0.1:${ports.provider}/v1/responses?x=1`, body: 'hello' });
    expect(answer).toMatchObject({ status: 200, body: 'provider POST /v1/responses?x=1 hello' });
    expect(answer.headers['x-upstream']).toBe('provider');
  });

  it('refuses a request or a tunnel anywhere else with 403, and says where to the worker', async () => {
    refused.length = 0;
    const answer = await send(proxy, { path: `http://127.0.0.1:${ports.other}/steal` });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('may reach only its model provider');
    expect(await tunnel(proxy, `127.0.0.1:${ports.other}`)).toEqual({ status: 403 });
    expect(await tunnel(proxy, '169.254.169.254:80')).toEqual({ status: 403 });
    expect(refused).toEqual([
      { host: '127.0.0.1', port: ports.other, how: 'request' },
      { host: '127.0.0.1', port: ports.other, how: 'connect' },
      { host: '169.254.169.254', port: 80, how: 'connect' },
    ]);
  });

  it('opens a tunnel to the provider and carries its bytes both ways', async () => {
    const opened = await tunnel(proxy, `127.0.0.1:${ports.provider}`);
    expect(opened.status).toBe(200);
    expect(opened.through).toContain('provider GET /in-tunnel');
  });

  it('answers 400 to a request that names no destination, 502 when the provider is down, and keeps serving', async () => {
    expect((await send(proxy, { path: '/v1/responses' })).status).toBe(400);
    expect((await send(proxy, { path: `https://127.0.0.1:${ports.provider}/` })).status).toBe(400);
    expect((await send(proxy, { path: `http://127.0.0.1:${ports.closed}/` })).status).toBe(502);
    expect(await tunnel(proxy, `127.0.0.1:${ports.closed}`)).toEqual({ status: 502 });
    expect((await send(proxy, { path: `http://127.0.0.1:${ports.provider}/still` })).status).toBe(200);
  });

  it('survives bad bytes: each connection is answered or closed, nothing passes but to the provider, and the next request is served', async () => {
    const rawReply = (bytes: Uint8Array) =>
      new Promise<string>((resolve) => {
        const socket = connect(proxy.socketPath);
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.on('error', () => undefined);
        socket.end(bytes);
      });
    const fixed = [Buffer.from('CONNECT\r\n\r\n'), Buffer.from('GET http://[::1 HTTP/1.1\r\n\r\n'), Buffer.from(`CONNECT 127.0.0.1:${ports.other} HTTP/1.1\r\nHost: x\r\n\r\n${'\u0000'.repeat(64)}`)];
    for (const bytes of fixed) expect(await rawReply(bytes)).toMatch(/^(|HTTP\/1\.1 (400|403)[^]*)$/);
    // Random request lines and headers around a target that is not the provider: never a 200, never the other server's answer.
    const line = fc.tuple(fc.constantFrom('GET', 'POST', 'CONNECT', 'G\u0000T', ''), fc.string({ maxLength: 40 }), fc.constantFrom(`http://127.0.0.1:${ports.other}/`, `127.0.0.1:${ports.other}`, ''), fc.string({ maxLength: 80 }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.uint8Array({ maxLength: 4096 }), line.map(([method, junk, target, rest]) => Buffer.from(`${method} ${target}${junk} HTTP/1.1\r\n${rest}\r\n\r\n`, 'latin1'))), async (bytes) => {
        const reply = await rawReply(bytes);
        expect(reply).not.toContain('other ');
        expect(reply).not.toMatch(/^HTTP\/1\.1 200/);
      }),
      { numRuns: 60 },
    );
    expect((await send(proxy, { path: `http://127.0.0.1:${ports.provider}/after` })).body).toBe('provider GET /after ');
  });

});
