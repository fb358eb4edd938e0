import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { Agent, request } from 'undici';
import type { BuiltRequest } from './fuzz-types.ts';

export interface Answer {
  /** HTTP status; `none` when the connection ended without one; `closed` when a body past the limit was cut off (run-fuzz.ts). */
  status: number | 'none' | 'closed';
  body: string;
  /** Set when no answer came where one was owed: the error's code. */
  error?: string;
}

const answerTimeoutMs = 30_000;
const maxBodyChars = 4096;

export interface Sender {
  send(built: BuiltRequest, sourceAddress: string | undefined): Promise<Answer>;
  close(): Promise<void>;
}

/**
 * Sends built requests to one gateway. Ordinary requests go through undici
 * on a few kept-alive connections; requests from another source address
 * (wrong admin credentials) or with an oversized head through node:http on a
 * fresh connection; `raw` and `raw-truncated` ones byte for byte on a socket
 * of their own.
 */
export function createSender(baseUrl: string, connections: number): Sender {
  const url = new URL(baseUrl);
  const dispatcher = new Agent({ connections, keepAliveTimeout: 10_000, headersTimeout: answerTimeoutMs, bodyTimeout: answerTimeoutMs });
  return {
    async send(built, sourceAddress) {
      if (built.transport !== 'http') return sendRaw(url, built, sourceAddress);
      // Node answers a request head past its 16 KiB limit with 431 and drops the connection; on a shared
      // one that would fail the next request too, so an oversized head gets a connection of its own.
      if (sourceAddress !== undefined || headBytes(built) > 8 * 1024) return sendFrom(url, built, sourceAddress);
      try {
        const headers: Record<string, string> = {};
        for (const [name, value] of built.headers) headers[name] = value;
        if (built.body !== undefined) headers['content-length'] = String(built.body.length);
        const answer = await request(new URL(built.path, url), {
          method: built.method as 'GET',
          headers,
          ...(built.body !== undefined ? { body: built.body } : {}),
          dispatcher,
        });
        return { status: answer.statusCode, body: clip(await answer.body.text()) };
      } catch (error) {
        return failed(error);
      }
    },
    async close() {
      await dispatcher.close();
    },
  };
}

function headBytes(built: BuiltRequest): number {
  return built.path.length + built.headers.reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);
}

function sendFrom(url: URL, built: BuiltRequest, localAddress: string | undefined): Promise<Answer> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { connection: 'close' };
    for (const [name, value] of built.headers) headers[name] = value;
    if (built.body !== undefined) headers['content-length'] = String(built.body.length);
    const req = httpRequest({ host: url.hostname, port: url.port, method: built.method, path: built.path, headers, ...(localAddress ? { localAddress } : {}), agent: false, timeout: answerTimeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: clip(Buffer.concat(chunks).toString('utf8')) }));
      res.on('error', (error) => resolve(failed(error)));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer in time'), { code: 'TIMEOUT' })));
    req.on('error', (error) => resolve(failed(error)));
    req.end(built.body);
  });
}

/** Header lines written as given (repeats, NUL and 8-bit bytes included), `Connection: close`, the whole answer read until the gateway closes. */
function sendRaw(url: URL, built: BuiltRequest, localAddress: string | undefined): Promise<Answer> {
  return new Promise((resolve) => {
    const body = built.body ?? Buffer.alloc(0);
    const lines = [`${built.method} ${built.path} HTTP/1.1`, `host: ${url.host}`, 'connection: close', ...built.headers.map(([name, value]) => `${name}: ${value}`), `content-length: ${body.length}`];
    const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
    const socket = connect({ host: url.hostname, port: Number(url.port), ...(localAddress ? { localAddress } : {}) });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (answer: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => finish({ status: 'none', body: '', error: 'TIMEOUT' }), answerTimeoutMs);
    socket.on('connect', () => {
      if (built.transport === 'raw-truncated') {
        // A body shorter than its Content-Length, then the end of the stream: an aborted request.
        socket.end(Buffer.concat([head, body.subarray(0, Math.floor(body.length * (built.sendFraction ?? 0.5)))]));
      } else {
        socket.write(Buffer.concat([head, body]));
      }
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The gateway may answer and close before it has read everything (a 400 for a bad header): the answer counts.
      const parsed = parseRawAnswer(Buffer.concat(chunks));
      finish(parsed ?? (built.transport === 'raw-truncated' ? { status: 'none', body: '' } : { status: 'none', body: '', error: error.code ?? error.message }));
    });
    socket.on('close', () => {
      const parsed = parseRawAnswer(Buffer.concat(chunks));
      finish(parsed ?? (built.transport === 'raw-truncated' ? { status: 'none', body: '' } : { status: 'none', body: '', error: 'CLOSED_WITHOUT_ANSWER' }));
    });
  });
}

function parseRawAnswer(data: Buffer): Answer | undefined {
  const text = data.toString('latin1');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!match) return undefined;
  const split = text.indexOf('\r\n\r\n');
  const headers = split === -1 ? text : text.slice(0, split);
  let body = split === -1 ? Buffer.alloc(0) : data.subarray(split + 4);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(headers)) body = dechunk(body);
  return { status: Number(match[1]), body: clip(body.toString('utf8')) };
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset < data.length) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd === -1) break;
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

function failed(error: unknown): Answer {
  const e = error as { code?: string; name?: string; message?: string };
  return { status: 'none', body: '', error: e.code ?? e.name ?? String(e.message ?? error) };
}

function clip(text: string): string {
  return text.length > maxBodyChars ? text.slice(0, maxBodyChars) : text;
}
