import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig } from '@switchboard/config';
import { startGateway } from '@switchboard/gateway';
import { adminRequest, adminTokenEnv, aliceToken, bobToken } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

interface ConversationView {
  id: number;
  key: string;
  platform: string;
  status: string;
  chatId: string;
  currentSessionId: number | null;
  runningTurnId: number | null;
  queuedInput: number;
}

describe('admin API: auth, documents and reading conversations', () => {
  let system: TestSystem;
  let base: string;
  const get = <T = Record<string, unknown>>(path: string, token?: string | null) => adminRequest<T>(base, 'GET', path, { token });
  // Failed authentications count per client address; tests that fail on purpose use their own loopback address.
  const failFrom = (localAddress: string) => (path: string, token: string | null) => adminRequest(base, 'GET', path, { token, localAddress });

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { ADMIN_TOKEN: adminTokenEnv } });
    base = system.gateway.url;
  });
  afterAll(async () => {
    await system?.close();
  });

  /** A first message in a new chat, answered; returns its conversation. */
  async function chat(chatId: number, text: string): Promise<ConversationView> {
    await system.sendTelegram({ chatId, text });
    await system.waitForTelegram(chatId, 1);
    const list = await get<{ items: ConversationView[] }>('/admin/conversations?platform=telegram&limit=500');
    const found = list.body.items.find((c) => c.chatId === String(chatId));
    if (!found) throw new Error(`conversation of chat ${chatId} not listed`);
    return found;
  }

  describe('authentication', () => {
    it('answers 401 without a token and with a wrong one, naming no secret', async () => {
      const fail = failFrom('127.0.0.11');
      const missing = await fail('/admin/conversations', null);
      expect(missing.status).toBe(401);
      expect(missing.body).toMatchObject({ ok: false, error: 'UNAUTHORIZED' });
      expect(missing.headers['www-authenticate']).toContain('Bearer');
      const wrong = await fail('/admin/conversations', 'not-the-token-at-all');
      expect(wrong.status).toBe(401);
      const malformed = await adminRequest(base, 'GET', '/admin/conversations', { token: null, headers: { authorization: `Basic ${aliceToken}` }, localAddress: '127.0.0.11' });
      expect(malformed.status).toBe(401);
    });

    it('accepts each configured token and knows its name', async () => {
      expect((await get<{ actor: string }>('/admin/whoami', aliceToken)).body.actor).toBe('alice');
      expect((await get<{ actor: string }>('/admin/whoami', bobToken)).body.actor).toBe('bob');
    });

    it('puts every admin route behind the token: docs, OpenAPI, bull-board, events', async () => {
      for (const path of ['/admin/openapi.json', '/admin/docs', '/admin/queues', '/admin/queues/api/queues', '/admin/turns', '/admin/audit', '/admin/events']) {
        expect((await failFrom('127.0.0.12')(path, null)).status, path).toBe(401);
      }
    });

    it('blocks an address after 10 failures, even with the right token, and only that address', async () => {
      const from = { localAddress: '127.0.0.2' };
      for (let i = 0; i < 10; i++) {
        expect((await adminRequest(base, 'GET', '/admin/whoami', { ...from, token: `wrong-${i}` })).status).toBe(401);
      }
      const blocked = await adminRequest(base, 'GET', '/admin/whoami', from);
      expect(blocked.status).toBe(429);
      expect(blocked.body).toMatchObject({ error: 'TOO_MANY_FAILURES' });
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      expect((await adminRequest(base, 'GET', '/admin/whoami', { localAddress: '127.0.0.3' })).status).toBe(200);
    });

    it('signs a browser in with an HttpOnly cookie that works only from the same origin', async () => {
      const session = await adminRequest<{ actor: string }>(base, 'POST', '/admin/session', { token: bobToken });
      expect(session.status).toBe(200);
      const setCookie = String(session.headers['set-cookie']);
      expect(setCookie).toMatch(/HttpOnly/);
      expect(setCookie).toMatch(/SameSite=Strict/);
      expect(setCookie).not.toContain(bobToken);
      const cookie = setCookie.split(';')[0] as string;
      const viaCookie = await adminRequest<{ actor: string }>(base, 'GET', '/admin/whoami', { token: null, headers: { cookie } });
      expect(viaCookie.body.actor).toBe('bob');
      const host = new URL(base).host;
      const sameOrigin = await adminRequest(base, 'POST', '/admin/conversations/999999/resume', { token: null, headers: { cookie, origin: `http://${host}` } });
      expect(sameOrigin.status).toBe(404);
      const foreign = await adminRequest(base, 'POST', '/admin/conversations/999999/resume', { token: null, headers: { cookie, origin: 'http://evil.example' } });
      expect(foreign.status).toBe(403);
      expect((await adminRequest(base, 'GET', '/admin/whoami', { token: null, headers: { cookie: `${cookie}x` }, localAddress: '127.0.0.13' })).status).toBe(401);
    });

    it('has no admin route at all when ADMIN_TOKEN is unset', async () => {
      const env = {
        DATABASE_URL: system.databaseUrl,
        REDIS_URL: redisUrl(),
        REDIS_PREFIX: system.redisPrefix,
        LOG_LEVEL: 'warn',
        PORT: '0',
      };
      const plain = await startGateway(parseConfig(gatewayEnvSchema, env));
      try {
        for (const path of ['/admin/conversations', '/admin/', '/admin/openapi.json', '/admin/queues']) {
          expect((await adminRequest(plain.url, 'GET', path)).status, path).toBe(404);
        }
        expect((await adminRequest(plain.url, 'GET', '/healthz')).status).toBe(200);
      } finally {
        await plain.close();
      }
    });
  });

  describe('documents and UIs', () => {
    it('serves the OpenAPI document with every admin route and its schemas', async () => {
      const spec = await get<{ openapi: string; paths: Record<string, Record<string, unknown>> }>('/admin/openapi.json');
      expect(spec.status).toBe(200);
      expect(spec.body.openapi).toMatch(/^3\./);
      for (const path of [
        '/admin/conversations',
        '/admin/conversations/{id}',
        '/admin/conversations/{id}/transcript',
        '/admin/conversations/{id}/suspend',
        '/admin/conversations/{id}/resume',
        '/admin/conversations/{id}/reset',
        '/admin/conversations/{id}/compact',
        '/admin/conversations/{id}/interrupt',
        '/admin/conversations/{id}/busy-mode',
        '/admin/conversations/{id}/runtime',
        '/admin/conversations/{id}/model',
        '/admin/turns',
        '/admin/queue',
        '/admin/queue/{queue}/failed',
        '/admin/queue/{queue}/jobs/{jobId}/retry',
        '/admin/outbox',
        '/admin/outbox/{id}/retry',
        '/admin/restarts',
        '/admin/audit',
        '/admin/events',
        '/admin/pairings',
        '/admin/pairings/{code}/approve',
        '/admin/paired-users',
        '/admin/paired-users/{platform}/{userId}',
      ]) {
        expect(spec.body.paths, path).toHaveProperty([path]);
      }
      expect(Object.keys(spec.body.paths).some((path) => path.startsWith('/admin/queues'))).toBe(false);
    });

    it('serves the docs UI, bull-board and the console page', async () => {
      const docs = await get<string>('/admin/docs/');
      expect(docs.status).toBe(200);
      expect(docs.body).toContain('swagger');
      const board = await get<string>('/admin/queues');
      expect(board.status).toBe(200);
      expect(board.body).toContain('<html');
      const queues = await get<{ queues: { name: string }[] }>('/admin/queues/api/queues');
      expect(queues.body.queues.map((q) => q.name)).toContain('turns');
      // The console's static shell holds no data and loads without a token, so a browser can sign in.
      const page = await get<string>('/admin/', null);
      expect(page.status).toBe(200);
      expect(page.body).toContain('Switchboard console');
      expect((await get('/admin/console/console.js', null)).status).toBe(200);
    });
  });

  describe('conversations', () => {
    it('lists conversations with filters and cursor pages', async () => {
      const a = await chat(9101, 'first');
      const b = await chat(9102, 'second');
      const c = await chat(9103, 'third');
      const all = await get<{ items: ConversationView[]; nextCursor: number | null }>('/admin/conversations');
      expect(all.body.items.map((x) => x.id)).toEqual(expect.arrayContaining([a.id, b.id, c.id]));
      expect(all.body.items[0]).toMatchObject({ platform: 'telegram', status: 'active', queuedInput: 0, runningTurnId: null });

      const seen: number[] = [];
      let cursor: number | null = null;
      do {
        const page: { body: { items: ConversationView[]; nextCursor: number | null } } = await get(`/admin/conversations?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.body.items.length).toBeLessThanOrEqual(1);
        seen.push(...page.body.items.map((x) => x.id));
        cursor = page.body.nextCursor;
      } while (cursor !== null);
      expect(seen).toEqual(all.body.items.map((x) => x.id));

      expect((await get<{ items: unknown[] }>('/admin/conversations?platform=slack')).body.items).toEqual([]);
      expect((await get<{ items: unknown[] }>('/admin/conversations?status=suspended')).body.items).toEqual([]);
      expect((await get<{ items: unknown[] }>('/admin/conversations?busy=true')).body.items).toEqual([]);
      expect((await get<{ items: unknown[] }>('/admin/conversations?busy=false')).body.items.length).toBe(all.body.items.length);
      const future = new Date(Date.now() + 3600_000).toISOString();
      expect((await get<{ items: unknown[] }>(`/admin/conversations?updatedSince=${future}`)).body.items).toEqual([]);
    });

    it('refuses bad filters with 400 naming the field', async () => {
      for (const [query, field] of [
        ['status=sleeping', 'status'],
        ['limit=0', 'limit'],
        ['updatedSince=yesterday', 'updatedSince'],
        ['busy=maybe', 'busy'],
        ['colour=blue', 'colour'],
      ]) {
        const response = await get(`/admin/conversations?${query}`);
        expect(response.status, query).toBe(400);
        expect(response.body, query).toMatchObject({ ok: false, error: 'INVALID_REQUEST', field });
      }
    });

    it('shows one conversation with its session chain, and 404 / 400 for bad ids', async () => {
      const conversation = await chat(9104, 'hello there');
      const detail = await get<{ conversation: ConversationView; chain: { id: number; messageCount: number }[]; runningTurn: unknown; defaultBusyMode: string }>(
        `/admin/conversations/${conversation.id}`,
      );
      expect(detail.status).toBe(200);
      expect(detail.body.conversation.key).toBe(conversation.key);
      expect(detail.body.chain).toEqual([expect.objectContaining({ id: conversation.currentSessionId, messageCount: 2 })]);
      expect(detail.body.runningTurn).toBeNull();
      expect(detail.body.defaultBusyMode).toBe('interrupt');
      expect((await get('/admin/conversations/999999')).body).toMatchObject({ error: 'CONVERSATION_NOT_FOUND' });
      expect((await get('/admin/conversations/999999')).status).toBe(404);
      const bad = await get('/admin/conversations/abc');
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ field: 'id' });
    });

    it('pages through the transcript across a compressed chain in order', async () => {
      const conversation = await chat(9105, 'one');
      const root = conversation.currentSessionId as number;
      // A compression as the worker commits it: a child session whose parent is the old one, the pointer moved.
      const [child] = await system.sql<{ id: string }[]>`
        insert into sessions (conversation_id, parent_session_id) values (${conversation.id}, ${root}) returning id`;
      const childId = Number(child?.id);
      await system.sql`update sessions set status = 'compressed', ended_at = now() where id = ${root}`;
      await system.sql`insert into messages (session_id, seq, role, kind, content) values (${childId}, 1, 'user', 'summary', 'summary of one')`;
      await system.sql`update sessions set last_seq = 1, message_count = 1 where id = ${childId}`;
      await system.sql`update conversations set current_session_id = ${childId} where id = ${conversation.id}`;
      await system.sendTelegram({ chatId: 9105, text: 'two' });
      await system.waitForTelegram(9105, 2);

      type Page = { messages: { sessionId: number; seq: number; role: string; kind: string; content: string }[]; nextCursor: string | null };
      const whole = await get<Page>(`/admin/conversations/${conversation.id}/transcript`);
      expect(whole.body.messages.map((m) => [m.sessionId, m.kind, m.content])).toEqual([
        [root, 'message', 'one'],
        [root, 'message', 'echo: one'],
        [childId, 'summary', 'summary of one'],
        [childId, 'message', 'two'],
        [childId, 'message', 'echo: two'],
      ]);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: Page } = await get(`/admin/conversations/${conversation.id}/transcript?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        paged.push(...page.body.messages.map((m) => m.content));
        cursor = page.body.nextCursor;
      } while (cursor !== null);
      expect(paged).toEqual(whole.body.messages.map((m) => m.content));
      const newest = await get<Page>(`/admin/conversations/${conversation.id}/transcript?order=desc&limit=1`);
      expect(newest.body.messages.map((m) => m.content)).toEqual(['echo: two']);
      const fromRoot = await get<Page>(`/admin/conversations/${conversation.id}/transcript?session=${root}`);
      expect(fromRoot.body.messages.map((m) => m.content)).toEqual(['one', 'echo: one']);

      expect((await get(`/admin/conversations/${conversation.id}/transcript?session=999999`)).status).toBe(404);
      expect((await get(`/admin/conversations/999999/transcript`)).status).toBe(404);
      expect((await get(`/admin/conversations/${conversation.id}/transcript?cursor=nonsense`)).body).toMatchObject({ field: 'cursor' });
    });
  });
});
