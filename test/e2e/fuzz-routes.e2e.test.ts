import { createHmac, generateKeyPairSync } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscordSigner, formatFuzzSummary, mib, runFuzzWithRowChecks, type FuzzTarget, type PhasedFuzzResult } from '../../apps/loadtest/src/fuzz/index.ts';
import { getFreePort, spawnApp, waitForHttp, type ManagedProcess } from '@switchboard/harness';
import { adminRequest } from '../support/admin-client.ts';
import { createConversation, writeHooksFile } from '../support/hooks.ts';
import { createRedisPrefix, createTestDatabase, redisUrl, type TestDatabase } from '../support/test-env.ts';

/**
 * Issue 17, Fuzzing: the short run. Generated payloads (apps/loadtest/src/fuzz)
 * at every webhook route and the admin API of a gateway running as its own
 * process, as in production: so a crash is a process that exited, not a
 * test runner that died, and its memory is its own, not the generator's.
 * The full count (10,000 per route) is `npx tsx scripts/fuzz.ts`; both are
 * described in docs/guarantees.md, "Fuzzing".
 */
const seed = 1717;
const perRoute = 750;
/**
 * Memory, per phase: the gateway's lowest resident set in the phase's last
 * quarter against its highest during the first fifth (runFuzz's memoryDrift).
 * The gateway runs with a 160 MiB old space, as in a container: without a
 * cap V8 lets garbage pile up to hundreds of MiB before a full collection
 * (measured: 260 → 500 → 310 MiB in one run that kept nothing), which makes
 * any bound either flaky or meaningless. With the cap the collector runs as
 * the heap fills, the floor at the end is what is kept, and a leak past the
 * cap ends the process, which the health check sees. Readings in this short
 * run: up to +22 MiB in the authentic phase, whose bodies reach 0.9 MiB and
 * whose warm-up (216 cases) may not yet hold the largest (buffers sized by
 * the largest body so far stay, the Postgres client's among them); so 64
 * MiB, which a gateway keeping 64 KiB per request (a body) still exceeds.
 */
const maxRssGrowthBytes = 64 * 1024 * 1024;

const adminTokens = [
  { name: 'alice', token: 'alice-fuzz-0123456789abcdef' },
  { name: 'bob', token: 'bob-fuzz-fedcba9876543210' },
];

const secrets = { slack: 'fuzz-slack-signing-secret', telegram: 'fuzz-telegram-secret', applicationId: '1400000000000000077', hook: 'fuzz-hook-secret-0123456789' };

/** A gateway of its own (its own database, nothing else writing), with every platform's webhook and the admin API; `env` adds to its environment. */
async function startFuzzGateway(env: Record<string, string>, options: { hooks?: boolean } = {}): Promise<{ database: TestDatabase; sql: postgres.Sql; gateway: ManagedProcess; target: FuzzTarget }> {
  const database = await createTestDatabase();
  const sql = postgres(database.url, { max: 2, onnotice: () => undefined });
  // Issue 34: a hook whose conversation exists (created before the gateway reads HOOKS_FILE), so authentic calls store input.
  const hooksFile = options.hooks
    ? writeHooksFile({
        fuzz: { secret: secrets.hook, conversationId: await createConversation(database.url, { platform: 'telegram', accountId: '123456', chatId: '4242', threadId: '', userScope: '' }), prompt: 'Fuzz: {{body}}' },
      })
    : undefined;
  const discordKeys = generateKeyPairSync('ed25519');
  const publicKeyHex = Buffer.from((discordKeys.publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url').toString('hex');
  const port = await getFreePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const gateway = spawnApp(
    `gateway-fuzz-${port}`,
    'apps/gateway/src/main.ts',
    {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl(),
      REDIS_PREFIX: createRedisPrefix(),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'error',
      TELEGRAM_BOT_TOKEN: '123456:fuzz-token',
      TELEGRAM_WEBHOOK_SECRET: secrets.telegram,
      // Nothing listens there: getMe fails at once and the gateway starts without the bot's username.
      TELEGRAM_API_ROOT: 'http://127.0.0.1:9',
      SLACK_SIGNING_SECRET: secrets.slack,
      DISCORD_PUBLIC_KEY: publicKeyHex,
      DISCORD_APPLICATION_ID: secrets.applicationId,
      ADMIN_TOKEN: adminTokens.map((t) => `${t.name}:${t.token}`).join(','),
      // Machine speed is far past a person's pace; the courtesy limit would answer most with a notice.
      USER_RATE_LIMIT_PER_MINUTE: '0',
      NODE_OPTIONS: '--max-old-space-size=160',
      ...(hooksFile ? { HOOKS_FILE: hooksFile } : {}),
      ...env,
    },
    'test-results/logs',
  );
  await waitForHttp(`${baseUrl}/readyz`, 60_000, gateway);
  const target: FuzzTarget = {
    baseUrl,
    slack: { signingSecret: secrets.slack },
    telegram: { webhookSecret: secrets.telegram, botId: '123456' },
    discord: { applicationId: secrets.applicationId, sign: createDiscordSigner(discordKeys.privateKey) },
    admin: { tokens: adminTokens },
    ...(hooksFile ? { hooks: { name: 'fuzz', secret: secrets.hook } } : {}),
  };
  return { database, sql, gateway, target };
}

type FuzzGateway = Awaited<ReturnType<typeof startFuzzGateway>>;

async function stopFuzzGateway(started: FuzzGateway | undefined): Promise<void> {
  await started?.gateway.stop();
  await started?.sql.end({ timeout: 5 });
  await started?.database.drop();
}

/**
 * The second gateway (issue 30): DM_POLICY=pairing, nobody allowlisted. Started beside the first in
 * beforeAll, so its start-up overlaps; its run is short (the `pairing` route only, pairing-cases.ts).
 */
let pairingGateway: Promise<FuzzGateway> | undefined;
const pairingCases = 300;

describe('fuzzed payloads at every webhook route and the admin API', () => {
  let sql: postgres.Sql;
  let gateway: ManagedProcess;
  let target: FuzzTarget;
  let started: FuzzGateway | undefined;

  beforeAll(async () => {
    pairingGateway = startFuzzGateway({ DM_POLICY: 'pairing' });
    // Caught here and awaited (and thrown) by the pairing test: an unhandled rejection would fail the whole file.
    pairingGateway.catch(() => undefined);
    started = await startFuzzGateway({}, { hooks: true });
    ({ sql, gateway, target } = started);
  }, 90_000);

  afterAll(async () => {
    await stopFuzzGateway(started);
    await stopFuzzGateway(await pairingGateway?.catch(() => undefined));
  });

  it(`seed ${seed}, ${perRoute} cases per route: no 5xx, no crash, no row from anything unauthenticated or invalid, memory flat`, async () => {
    const result: PhasedFuzzResult = await runFuzzWithRowChecks({ target, sql, seed, perRoute, concurrency: 6, maxRssGrowthBytes });
    const report = `${formatFuzzSummary(result.refused, 'unauthenticated and invalid')}\n${formatFuzzSummary(result.authentic, 'authentic')}\nRSS at the start ${mib(result.rss.atStart ?? 0)} MiB, peak ${mib(result.rss.peak ?? 0)} MiB, at the end ${mib(result.rss.atEnd ?? 0)} MiB`;

    const drift = (bytes: number | undefined) => (bytes === undefined ? '?' : `${mib(bytes)} MiB`);
    console.info(
      `fuzz seed ${seed}: ${result.refused.sent} unauthenticated/invalid in ${result.refused.durationMs} ms, ${result.authentic.sent} authentic in ${result.authentic.durationMs} ms; ` +
        `${result.rows.inboundWritten} inbound events stored; RSS drift ${drift(result.rss.driftRefused)} / ${drift(result.rss.driftAuthentic)}`,
    );
    expect(result.problems, report).toEqual([]);
    expect(gateway.child.exitCode, 'the gateway process exited').toBeNull();
    // Every class reached every route, so a generator that silently stopped producing one would be noticed.
    for (const summary of [result.refused, result.authentic]) {
      for (const route of ['slack', 'telegram', 'discord', 'admin', 'hooks'] as const) expect(summary.byRoute[route]?.sent ?? 0, `${route}\n${report}`).toBeGreaterThan(50);
    }
    // The schedule routes (issue 34) got authentic cases too: bad times, crons and time zones, conversations and schedules that do not exist.
    for (const route of ['GET /admin/schedules', 'POST /admin/schedules', 'DELETE /admin/schedules/{id}']) expect(result.authentic.byRoute.admin?.byKind[`route:${route}`] ?? 0, `${route}\n${report}`).toBeGreaterThan(0);
    // The authentic phase stored messages on each platform, and no other phase stored anything (checked in problems).
    expect(result.rows.inboundWritten, report).toBeGreaterThan(100);
    expect(result.rows.afterRefused).toEqual(result.rows.beforeRefused);
    // Signed hook calls stored input in the hook's conversation, and replayed delivery ids were answered as duplicates (issue 34).
    expect(result.authentic.byRoute.hooks?.outcomes, report).toMatchObject({ accepted: expect.any(Number), duplicate: expect.any(Number) });
    expect((await fetch(`${target.baseUrl}/readyz`)).status).toBe(200);
  }, 150_000);

  it(`DM_POLICY=pairing, seed ${seed}, ${pairingCases} pairing cases: unpaired DMs on every platform and the pairing admin routes; the slot cap holds, no DM becomes input, no crash, memory flat`, async () => {
    const pairing = await (pairingGateway as Promise<FuzzGateway>);
    const pairingTarget: FuzzTarget = { ...pairing.target, pairing: { maxPendingPerPlatform: 3 } };
    const result = await runFuzzWithRowChecks({ target: pairingTarget, sql: pairing.sql, seed, perRoute: { pairing: pairingCases }, concurrency: 6, maxRssGrowthBytes });
    const report = `${formatFuzzSummary(result.refused, 'unauthenticated and invalid')}\n${formatFuzzSummary(result.authentic, 'authentic')}\npairing rows ${JSON.stringify(result.pairing)}`;
    console.info(`fuzz pairing seed ${seed}: ${result.refused.sent} unauthenticated/invalid, ${result.authentic.sent} authentic; pairing rows ${JSON.stringify(result.pairing?.byStatus)}; most pending at once ${result.pairing?.maxPendingSeen}`);
    expect(result.problems, report).toEqual([]);
    expect(pairing.gateway.child.exitCode, 'the pairing gateway process exited').toBeNull();
    // The flow was exercised on each platform: codes issued, and squatters and newcomers evicting the oldest.
    for (const platform of ['telegram', 'slack', 'discord']) {
      const statuses = result.pairing?.byStatus[platform] ?? {};
      expect(statuses.pending ?? 0, `${platform}\n${report}`).toBeGreaterThan(0);
      expect(statuses.evicted ?? 0, `${platform}\n${report}`).toBeGreaterThan(0);
    }
    expect(result.pairing?.probes ?? 0, report).toBeGreaterThan(5);
    const admin = result.authentic.byRoute.pairing?.byKind ?? {};
    expect((admin['pairing:approve'] ?? 0) + (admin['pairing:deny'] ?? 0), report).toBeGreaterThan(20);
  }, 120_000);

  // Regressions for what the fuzzer found in the admin API (each was a 500).
  describe('admin input the fuzzer found', () => {
    const admin = (method: string, path: string, body?: unknown) => adminRequest(target.baseUrl, method, path, { token: adminTokens[0]?.token, ...(body !== undefined ? { body } : {}) });
    const auditRows = (action: string, target: string) =>
      sql<{ target: string; detail: { reason?: string } | null }[]>`select target, detail from audit_log where action = ${action} and target = ${target} order by id`;

    it('answers ids and cursors past 2^53 with 400 naming the field, not a failed query', async () => {
      for (const [method, path, field] of [
        ['POST', '/admin/conversations/99999999999999999999/suspend', 'id'],
        ['GET', '/admin/conversations/9223372036854775808', 'id'],
        ['GET', '/admin/conversations/9007199254740993/transcript', 'id'],
        ['PUT', '/admin/conversations/123456789012345678901234567890/busy-mode', 'id'],
        ['POST', '/admin/outbox/1208925819614629174706171/retry', 'id'],
        ['GET', '/admin/turns?conversation=18446744073709551616', 'conversation'],
        ['GET', '/admin/audit?cursor=77151450338917449055579', 'cursor'],
        ['GET', '/admin/conversations/1/transcript?cursor=1:99999999999', 'cursor'],
        ['GET', '/admin/queue/turns/failed?offset=99999999999999999999', 'offset'],
      ] as const) {
        const answer = await admin(method, path, method === 'PUT' ? { mode: 'queue' } : undefined);
        expect(answer.status, `${method} ${path}`).toBe(400);
        expect(answer.body, `${method} ${path}`).toMatchObject({ error: 'INVALID_REQUEST', field });
      }
      // The largest exact id is still an id: not found, and the refusal audited as before.
      expect((await admin('POST', '/admin/conversations/9007199254740991/reset')).status).toBe(404);
    });

    it('normalises NUL and lone surrogates in admin text instead of failing the audit row or the query', async () => {
      const suspend = await admin('POST', '/admin/conversations/9007199254740990/suspend', { reason: 'a\u0000b\ud800' });
      expect(suspend.status).toBe(404);
      expect((await auditRows('conversation.suspend', 'conversation:9007199254740990')).map((row) => row.detail?.reason)).toEqual(['ab\ufffd']);
      const retry = await admin('POST', `/admin/queue/turns/jobs/${encodeURIComponent('\u0000x')}/retry`);
      expect(retry.status).toBe(404);
      expect(await auditRows('job.retry', 'job:turns/x')).toHaveLength(1);
      const audit = await admin('GET', '/admin/audit?actor=x%00y&target=%ED%A0%80');
      expect(audit.status).toBe(200);
      expect(audit.body).toMatchObject({ items: [] });
    });
  });

  // Regressions for what the fuzzer found in the pairing flow.
  describe('pairing input the fuzzer found', () => {
    /** A Slack DM from `user`, signed as Slack signs it. */
    const slackDm = async (baseUrl: string, user: string, seq: number) => {
      const body = JSON.stringify({
        type: 'event_callback',
        team_id: 'TREGRESS',
        event_id: `EvRegress${seq}`,
        event: { type: 'message', channel_type: 'im', channel: `D${seq}`, user, text: 'hello', ts: `1700000000.00000${seq}` },
      });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = `v0=${createHmac('sha256', secrets.slack).update(`v0:${timestamp}:${body}`).digest('hex')}`;
      const answer = await fetch(`${baseUrl}/webhooks/slack/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature },
        body,
      });
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
    };

    it('acknowledges an unpaired DM whose user id Postgres cannot index (past its index-row limit) as unreadable input, not 503 for the platform to re-deliver forever', async () => {
      const pairing = await (pairingGateway as Promise<FuzzGateway>);
      // Long and without repeats, so Postgres cannot compress it under the limit; a readable id right after still gets its code.
      const longId = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20_000))).join('');
      const [before] = await pairing.sql<{ n: number }[]>`select count(*)::int as n from pairings`;
      expect(await slackDm(pairing.target.baseUrl, `U${longId}`, 1)).toEqual({ status: 200, body: expect.objectContaining({ outcome: 'invalid_input' }) });
      expect(await slackDm(pairing.target.baseUrl, 'UREGRESS2', 2)).toEqual({ status: 200, body: expect.objectContaining({ outcome: 'not_allowed' }) });
      const [after] = await pairing.sql<{ n: number }[]>`select count(*)::int as n from pairings`;
      expect((after?.n ?? 0) - (before?.n ?? 0)).toBe(1);
      expect((await fetch(`${pairing.target.baseUrl}/readyz`)).status).toBe(200);
    });
  });
});
