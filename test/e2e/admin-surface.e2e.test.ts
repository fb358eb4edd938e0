import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv, aliceToken, bobToken, type AdminResponse } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

interface AuditRow {
  actor: string;
  action: string;
  target: string;
  result: string;
  detail: Record<string, unknown> | null;
  clientAddress: string | null;
}

// Issue 17, defects 6 and 9: bull-board only looks, sign-ins are audited, and every admin page carries security headers.
describe('admin surface: read-only bull-board, audited sign-ins, security headers', () => {
  let system: TestSystem;
  let base: string;

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { ADMIN_TOKEN: adminTokenEnv } });
    base = system.gateway.url;
  });
  afterAll(async () => {
    await system?.close();
  });

  const auditRows = async (query = '') => (await adminRequest<{ items: AuditRow[] }>(base, 'GET', `/admin/audit?limit=500${query}`)).body.items;

  describe('bull-board', () => {
    let connection: Redis;
    let queue: Queue;

    beforeAll(async () => {
      connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
      queue = new Queue('turns', { connection, prefix: `${system.redisPrefix}:bull` });
      // Delayed for an hour: it stays where it is unless something moves it.
      await queue.add('no-such-job', { parked: true }, { delay: 3_600_000, jobId: 'parked-1' });
    });
    afterAll(async () => {
      await queue?.remove('parked-1');
      await queue?.close();
      connection?.disconnect();
    });

    const queueState = async () => ({
      paused: await queue.isPaused(),
      counts: await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'paused', 'prioritized'),
      parked: await queue.getJob('parked-1').then(async (job) => (job ? { state: await job.getState(), data: job.data as unknown, delay: job.delay } : null)),
    });

    it('refuses every change through /admin/queues and leaves the queue as it was', async () => {
      const before = await queueState();
      expect(before).toMatchObject({ paused: false, parked: { state: 'delayed', data: { parked: true } } });
      const auditBefore = (await auditRows()).length;

      const attempts: [string, string, unknown?][] = [
        ['PUT', '/admin/queues/api/queues/pause'],
        ['PUT', '/admin/queues/api/queues/turns/pause'],
        ['PUT', '/admin/queues/api/queues/turns/clean/delayed'],
        ['PUT', '/admin/queues/api/queues/turns/empty'],
        ['PUT', '/admin/queues/api/queues/turns/obliterate', { force: true }],
        ['POST', '/admin/queues/api/queues/turns/add', { name: 'wake-conversation', data: { conversationId: 1 } }],
        ['PUT', '/admin/queues/api/queues/turns/retry/failed'],
        ['PUT', '/admin/queues/api/queues/turns/promote'],
        ['PUT', '/admin/queues/api/queues/turns/parked-1/promote'],
        ['PUT', '/admin/queues/api/queues/turns/parked-1/clean'],
        ['PATCH', '/admin/queues/api/queues/turns/parked-1/update-data', { data: { parked: false } }],
      ];
      for (const [method, path, body] of attempts) {
        const answer = await adminRequest(base, method, path, { body: body ?? {} });
        expect(answer.status, `${method} ${path}`).toBe(405);
        expect(answer.body, `${method} ${path}`).toMatchObject({ ok: false, error: 'READ_ONLY' });
        expect(answer.headers.allow).toBe('GET, HEAD');
      }

      expect(await queueState()).toEqual(before);
      // Nothing happened, so nothing was audited either; changes go through the audited API.
      expect((await auditRows()).length).toBe(auditBefore);
    });

    it('still shows the board, the queue and its jobs, with bull-board itself read-only', async () => {
      for (const path of ['/admin/queues', '/admin/queues/queue/turns']) {
        const page = await adminRequest<string>(base, 'GET', path);
        expect(page.status, path).toBe(200);
        expect(page.body, path).toContain('<html');
      }
      const queues = await adminRequest<{ queues: { name: string; readOnlyMode: boolean; allowRetries: boolean; counts: Record<string, number> }[] }>(
        base,
        'GET',
        '/admin/queues/api/queues?activeQueue=turns&status=delayed',
      );
      // The schedule occurrences' queue beside the turns' (docs/schedules.md), read-only the same way.
      expect(queues.body.queues).toEqual([
        expect.objectContaining({ name: 'turns', readOnlyMode: true, allowRetries: false }),
        expect.objectContaining({ name: 'schedules', readOnlyMode: true, allowRetries: false }),
      ]);
      expect(queues.body.queues[0]?.counts.delayed).toBe(1);
      const job = await adminRequest<{ job: { id: string; data: unknown } }>(base, 'GET', '/admin/queues/api/queues/turns/parked-1');
      expect(job.status).toBe(200);
      expect(job.body.job).toMatchObject({ id: 'parked-1', data: { parked: true } });
    });
  });

  describe('sign-ins', () => {
    it('audits each sign-in and sign-out with the actor and the client address, never the token or the cookie', async () => {
      const signIn = await adminRequest<{ expiresAt: string }>(base, 'POST', '/admin/session', { token: bobToken });
      expect(signIn.status).toBe(200);
      const cookie = String(signIn.headers['set-cookie']).split(';')[0] as string;
      const signOut = await adminRequest(base, 'DELETE', '/admin/session', { token: null, headers: { cookie } });
      expect(signOut.status).toBe(200);

      const rows = await auditRows('&target=session:bob');
      expect(rows.map((row) => [row.actor, row.action, row.result, row.clientAddress])).toEqual([
        ['bob', 'session.end', 'ok', '127.0.0.1'],
        ['bob', 'session.start', 'ok', '127.0.0.1'],
      ]);
      expect(rows[1]?.detail).toEqual({ expiresAt: signIn.body.expiresAt });
      const everything = JSON.stringify(await auditRows());
      expect(everything).not.toContain(bobToken);
      expect(everything).not.toContain(aliceToken);
      expect(everything).not.toContain(cookie.slice(cookie.indexOf('=') + 1));
      expect(everything).not.toContain(decodeURIComponent(cookie.slice(cookie.indexOf('=') + 1)).split('.').pop());
    });

    it('writes no row for a failed sign-in: it is refused before any action, and only logged and counted', async () => {
      const before = (await auditRows()).length;
      const wrong = await adminRequest(base, 'POST', '/admin/session', { token: 'not-a-configured-token', localAddress: '127.0.0.51' });
      expect(wrong.status).toBe(401);
      expect(wrong.headers['set-cookie']).toBeUndefined();
      expect((await auditRows()).length).toBe(before);
    });
  });

  describe('security headers', () => {
    const policyOf = (answer: AdminResponse<unknown>) =>
      new Map(
        String(answer.headers['content-security-policy'] ?? '')
          .split(';')
          .map((directive) => directive.trim().split(/\s+/))
          .filter((words) => words[0])
          .map(([name, ...values]) => [name as string, values]),
      );

    it('sends a strict policy with the console, its files and the API, signed in or not', async () => {
      const answers = {
        console: await adminRequest(base, 'GET', '/admin/', { token: null }),
        script: await adminRequest(base, 'GET', '/admin/console/console.js', { token: null }),
        api: await adminRequest(base, 'GET', '/admin/conversations'),
        refused: await adminRequest(base, 'GET', '/admin/conversations', { token: null }),
      };
      for (const [name, answer] of Object.entries(answers)) {
        expect(answer.status, name).toBe(name === 'refused' ? 401 : 200);
        expect(answer.headers['x-frame-options'], name).toBe('DENY');
        expect(answer.headers['x-content-type-options'], name).toBe('nosniff');
        expect(answer.headers['strict-transport-security'], name).toBeUndefined();
        const policy = policyOf(answer);
        expect(policy.get('frame-ancestors'), name).toEqual(["'none'"]);
        expect(policy.get('script-src'), name).toEqual(["'self'"]);
        expect(policy.get('style-src'), name).toEqual(["'self'"]);
        expect(policy.get('object-src'), name).toEqual(["'none'"]);
        expect(policy.has('upgrade-insecure-requests'), name).toBe(false);
      }
    });

    it('lets the API docs and bull-board use inline styles, and nothing more', async () => {
      for (const path of ['/admin/docs/', '/admin/queues']) {
        const answer = await adminRequest(base, 'GET', path);
        expect(answer.status, path).toBe(200);
        expect(answer.headers['x-frame-options'], path).toBe('DENY');
        const policy = policyOf(answer);
        expect(policy.get('style-src'), path).toEqual(["'self'", "'unsafe-inline'", 'https://fonts.googleapis.com']);
        expect(policy.get('script-src'), path).toEqual(["'self'"]);
        expect(policy.get('frame-ancestors'), path).toEqual(["'none'"]);
      }
    });

    it('leaves the webhooks, health and metrics routes alone', async () => {
      for (const path of ['/healthz', '/metrics']) {
        const answer = await adminRequest(base, 'GET', path, { token: null });
        expect(answer.status, path).toBe(200);
        expect(answer.headers['content-security-policy'], path).toBeUndefined();
      }
    });
  });
});
