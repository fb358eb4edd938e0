import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv, aliceToken } from '../support/admin-client.ts';
import { TestSystem, webhookSecret } from '../support/system.ts';

interface RawAnswer {
  status: number;
  body: string;
}

/** One request with the path sent byte for byte as given (fetch and URL would normalise it first). */
function rawRequest(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string, localAddress = '127.0.0.41'): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers, localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

// Issue 19, security pass: the admin surface cannot be reached without a
// token through path tricks, method overrides or encodings, and the request
// limits hold on every route.
describe('admin auth cannot be bypassed; request limits hold', () => {
  let system: TestSystem;
  let base: string;
  const chatId = 7_919_001;

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { ADMIN_TOKEN: adminTokenEnv, BODY_LIMIT_BYTES: String(64 * 1024) } });
    base = system.gateway.url;
    await system.sendTelegram({ chatId, text: 'a line only an operator may read' });
    await system.waitForTelegram(chatId, 1);
  });
  afterAll(async () => {
    await system?.close();
  });

  const trickPaths = [
    '/admin/conversations',
    '/admin//conversations',
    '//admin/conversations',
    '/admin/./conversations',
    '/x/../admin/conversations',
    '/%61dmin/conversations',
    '/admin%2fconversations',
    '/admin%2Fconversations',
    '/ADMIN/conversations',
    '/Admin/Conversations',
    '/admin/conversations/',
    '/admin/conversations;.css',
    '/admin/conversations%00',
    '/admin/conversations%20',
    '/admin/conversations?token=' + aliceToken.slice(0, 4),
    '/admin/conversations#x',
    '/admin/console/../conversations',
    '/admin/console/%2e%2e/conversations',
    '/admin/queues/api/queues',
    '/admin/queues/../conversations',
    '/admin/audit',
    '/admin/whoami',
    '/admin/documentation/json',
  ];

  it.each(trickPaths)('refuses %s without a token and shows no conversation data', async (path) => {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      const answer = await rawRequest(base, method, path);
      expect(answer.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(answer.status, `${method} ${path}`).toBeLessThan(500);
      expect(answer.body).not.toContain(String(chatId));
      expect(answer.body).not.toContain('only an operator');
    }
  });

  it('ignores method-override headers and query parameters', async () => {
    const before = await adminRequest<{ items: { chatId: string; status: string }[] }>(base, 'GET', '/admin/conversations?platform=telegram');
    const target = before.body.items.find((c) => c.chatId === String(chatId));
    expect(target).toBeDefined();
    for (const header of ['x-http-method-override', 'x-method-override', 'x-http-method']) {
      const answer = await rawRequest(base, 'GET', `/admin/conversations?_method=POST`, { [header]: 'POST' });
      expect(answer.status).toBe(401);
    }
    // A write dressed as a read, or a read with a write's override, changes nothing without a token.
    const suspend = await rawRequest(base, 'POST', `/admin/conversations/${(target as unknown as { id: number }).id}/suspend?_method=GET`, { 'x-http-method-override': 'GET', 'content-type': 'application/json' }, '{}');
    expect(suspend.status).toBe(401);
    const after = await adminRequest<{ items: { chatId: string; status: string }[] }>(base, 'GET', '/admin/conversations?platform=telegram');
    expect(after.body.items.find((c) => c.chatId === String(chatId))?.status).toBe(target?.status);
  });

  it('refuses a token sent anywhere but the Authorization header or the session cookie', async () => {
    const placements: Record<string, string>[] = [
      { 'x-admin-token': aliceToken },
      { 'x-api-key': aliceToken },
      { authorization: aliceToken },
      { authorization: `Bearer  ${aliceToken}x` },
      { authorization: `bearer ${aliceToken.toUpperCase()}` },
      { cookie: `token=${aliceToken}` },
    ];
    for (const headers of placements) {
      const answer = await rawRequest(base, 'GET', '/admin/conversations', headers, undefined, '127.0.0.42');
      expect(answer.status, JSON.stringify(Object.keys(headers))).toBe(401);
      // No answer repeats what was sent as a credential.
      expect(answer.body).not.toContain(aliceToken);
    }
    const inQuery = await rawRequest(base, 'GET', `/admin/conversations?access_token=${aliceToken}&token=${aliceToken}`, {}, undefined, '127.0.0.43');
    expect(inQuery.status).toBe(401);
    expect(inQuery.body).not.toContain(aliceToken);
  });

  it('answers an oversized body with 413 on the webhook and the admin API, and stores nothing', async () => {
    const before = await system.sql<{ n: number }[]>`select count(*)::int as n from inbound_events`;
    const huge = JSON.stringify({ update_id: 999_001, message: { message_id: 1, date: 1, chat: { id: chatId, type: 'private' }, from: { id: chatId, is_bot: false, first_name: 'x' }, text: 'x'.repeat(70 * 1024) } });
    const webhook = await rawRequest(base, 'POST', '/webhooks/telegram', { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': webhookSecret }, huge);
    expect(webhook.status).toBe(413);
    const admin = await rawRequest(base, 'POST', '/admin/conversations/1/suspend', { 'content-type': 'application/json', authorization: `Bearer ${aliceToken}` }, JSON.stringify({ reason: 'x'.repeat(70 * 1024) }));
    expect(admin.status).toBe(413);
    const after = await system.sql<{ n: number }[]>`select count(*)::int as n from inbound_events`;
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('answers oversized headers with 431 and keeps serving', async () => {
    // Over a plain socket: the server answers and closes while the client may still be writing.
    const { hostname, port } = new URL(base);
    const statusLine = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.end(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: ${'y'.repeat(32 * 1024)}\r\n\r\n`));
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.on('close', () => resolve(text.split('\r\n')[0] ?? ''));
      socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    });
    expect(statusLine).toMatch(/^HTTP\/1\.1 431/);
    expect((await rawRequest(base, 'GET', '/healthz')).status).toBe(200);
  });
});
