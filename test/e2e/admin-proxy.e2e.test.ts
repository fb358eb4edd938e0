import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig } from '@switchboard/config';
import { startGateway, type RunningGateway } from '@switchboard/gateway';
import { adminRequest, adminTokenEnv, aliceToken, type AdminRequestOptions } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

interface AuditRow {
  actor: string;
  action: string;
  target: string;
  result: string;
  clientAddress: string | null;
}

/**
 * Issue 17, defect 7: behind a TLS proxy. The tests' own connections play
 * the proxy: they come from 127.0.0.1, which TRUST_PROXY names, and say who
 * the client is in X-Forwarded-For / -Proto / -Host. Connections from other
 * loopback addresses play clients that reach the gateway directly.
 */
describe('admin API behind a TLS proxy (TRUST_PROXY)', () => {
  let system: TestSystem;
  let base: string;
  const proxy = '127.0.0.1';

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { ADMIN_TOKEN: adminTokenEnv, TRUST_PROXY: proxy } });
    base = system.gateway.url;
  });
  afterAll(async () => {
    await system?.close();
  });

  /** Another gateway on the same database and Redis, configured otherwise. */
  async function withGateway(env: Record<string, string>, run: (url: string) => Promise<void>): Promise<void> {
    const gateway: RunningGateway = await startGateway(
      parseConfig(gatewayEnvSchema, { DATABASE_URL: system.databaseUrl, REDIS_URL: redisUrl(), REDIS_PREFIX: system.redisPrefix, LOG_LEVEL: 'error', PORT: '0', ADMIN_TOKEN: adminTokenEnv, ...env }),
    );
    try {
      await run(gateway.url);
    } finally {
      await gateway.close();
    }
  }

  const forwarded = (client: string, extra: Record<string, string> = {}): AdminRequestOptions => ({ localAddress: proxy, headers: { 'x-forwarded-for': client, ...extra } });
  const signIn = (url: string, options: AdminRequestOptions) => adminRequest(url, 'POST', '/admin/session', options);
  const setCookieOf = (answer: { headers: Record<string, string | string[] | undefined> }) => String(answer.headers['set-cookie'] ?? '');
  const isSecure = (setCookie: string) => setCookie.split(';').some((attribute) => attribute.trim() === 'Secure');
  const latestAudit = async (url: string, query: string) => (await adminRequest<{ items: AuditRow[] }>(url, 'GET', `/admin/audit?limit=1&${query}`)).body.items[0];

  it('locks out the forwarded client after ten failures, and only that client', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await signIn(base, { ...forwarded('203.0.113.7'), token: `wrong-${i}` })).status).toBe(401);
    }
    const blocked = await signIn(base, { ...forwarded('203.0.113.7'), token: aliceToken });
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ error: 'TOO_MANY_FAILURES' });
    // Another client behind the same proxy, and the proxy itself, still get in.
    expect((await signIn(base, { ...forwarded('203.0.113.8'), token: aliceToken })).status).toBe(200);
    expect((await signIn(base, { localAddress: proxy, token: aliceToken })).status).toBe(200);
  });

  it('believes X-Forwarded-For only from the trusted proxy: a direct client cannot pose as many', async () => {
    const direct = '127.0.0.61';
    for (let i = 0; i < 10; i++) {
      expect((await signIn(base, { localAddress: direct, headers: { 'x-forwarded-for': `198.51.100.${i}` }, token: `wrong-${i}` })).status).toBe(401);
    }
    expect((await signIn(base, { localAddress: direct, headers: { 'x-forwarded-for': '198.51.100.200' }, token: aliceToken })).status).toBe(429);
    expect((await signIn(base, { localAddress: '127.0.0.62', token: aliceToken })).status).toBe(200);
  });

  it('writes the forwarded client address to the audit log, not the proxy’s or one the client made up', async () => {
    // The proxy appends the address it saw; what the client sent itself stays to the left and is not believed.
    const signedIn = await signIn(base, { ...forwarded('10.66.66.66, 198.51.100.23'), token: aliceToken });
    expect(signedIn.status).toBe(200);
    expect(await latestAudit(base, 'action=session.start')).toMatchObject({ actor: 'alice', clientAddress: '198.51.100.23' });
    expect((await adminRequest(base, 'POST', '/admin/queue/turns/jobs/nope/retry', forwarded('198.51.100.24'))).status).toBe(404);
    expect(await latestAudit(base, 'action=job.retry')).toMatchObject({ result: 'JOB_NOT_FOUND', clientAddress: '198.51.100.24' });
    await signIn(base, { localAddress: '127.0.0.63', headers: { 'x-forwarded-for': '198.51.100.25' }, token: aliceToken });
    expect(await latestAudit(base, 'action=session.start')).toMatchObject({ clientAddress: '127.0.0.63' });
  });

  it('marks the session cookie Secure when the client came over https, as the trusted proxy says', async () => {
    const https = await signIn(base, { ...forwarded('203.0.113.30', { 'x-forwarded-proto': 'https' }), token: aliceToken });
    expect(https.status).toBe(200);
    expect(isSecure(setCookieOf(https))).toBe(true);
    expect(setCookieOf(https)).toMatch(/HttpOnly/);
    const http = await signIn(base, { ...forwarded('203.0.113.30'), token: aliceToken });
    expect(isSecure(setCookieOf(http))).toBe(false);
    // A client that is not the proxy cannot claim https for itself (nor http: it is whatever its connection is).
    const direct = await signIn(base, { localAddress: '127.0.0.64', headers: { 'x-forwarded-proto': 'https' }, token: aliceToken });
    expect(isSecure(setCookieOf(direct))).toBe(false);
    const cookie = setCookieOf(https).split(';')[0] as string;
    const signOut = await adminRequest(base, 'DELETE', '/admin/session', { ...forwarded('203.0.113.30', { 'x-forwarded-proto': 'https', cookie }), token: null });
    expect(isSecure(setCookieOf(signOut))).toBe(true);
  });

  it('checks a cookie request’s Origin against the host the client asked the proxy for', async () => {
    const cookie = setCookieOf(await signIn(base, { localAddress: proxy, token: aliceToken })).split(';')[0] as string;
    const action = (options: AdminRequestOptions) => adminRequest(base, 'POST', '/admin/conversations/999999/resume', { ...options, token: null });
    const publicHost = { cookie, origin: 'https://admin.example', 'x-forwarded-host': 'admin.example', 'x-forwarded-proto': 'https' };
    expect((await action({ localAddress: proxy, headers: publicHost })).status).toBe(404);
    expect((await action({ localAddress: proxy, headers: { ...publicHost, origin: 'https://evil.example' } })).status).toBe(403);
    expect((await action({ localAddress: '127.0.0.65', headers: publicHost })).status).toBe(403);
  });

  it('without TRUST_PROXY believes no forwarded header: the connecting address is the client', async () => {
    await withGateway({}, async (url) => {
      const viaProxy = '127.0.0.66';
      const https = await signIn(url, { localAddress: viaProxy, headers: { 'x-forwarded-for': '203.0.113.40', 'x-forwarded-proto': 'https' }, token: aliceToken });
      expect(isSecure(setCookieOf(https))).toBe(false);
      expect(await latestAudit(url, 'action=session.start')).toMatchObject({ clientAddress: viaProxy });
      // Every client behind an untrusted proxy is the proxy: ten failures from any of them lock all of them out.
      for (let i = 0; i < 10; i++) {
        expect((await signIn(url, { localAddress: viaProxy, headers: { 'x-forwarded-for': `203.0.113.${50 + i}` }, token: `wrong-${i}` })).status).toBe(401);
      }
      expect((await signIn(url, { localAddress: viaProxy, headers: { 'x-forwarded-for': '203.0.113.99' }, token: aliceToken })).status).toBe(429);
    });
  });

  it('with a hop count trusts that many hops, since Fastify alone would trust none', async () => {
    await withGateway({ TRUST_PROXY: '1' }, async (url) => {
      const answer = await signIn(url, { ...forwarded('10.66.66.66, 203.0.113.70', { 'x-forwarded-proto': 'https' }), token: aliceToken });
      expect(isSecure(setCookieOf(answer))).toBe(true);
      expect(await latestAudit(url, 'action=session.start')).toMatchObject({ clientAddress: '203.0.113.70' });
    });
  });

  it('ADMIN_COOKIE_SECURE=always marks the cookie Secure over plain http; never leaves it off over https', async () => {
    await withGateway({ ADMIN_COOKIE_SECURE: 'always' }, async (url) => {
      expect(isSecure(setCookieOf(await signIn(url, { token: aliceToken })))).toBe(true);
    });
    await withGateway({ ADMIN_COOKIE_SECURE: 'never', TRUST_PROXY: proxy }, async (url) => {
      expect(isSecure(setCookieOf(await signIn(url, forwarded('203.0.113.80', { 'x-forwarded-proto': 'https' }))))).toBe(false);
    });
  });
});
