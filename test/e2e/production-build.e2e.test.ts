import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createScratchDir, getFreePort, repoRoot, spawnCommand, waitForHttp, type ManagedProcess } from '@switchboard/harness';
import { createRedisPrefix, redisUrl } from '../support/test-env.ts';

const run = promisify(execFile);
const botToken = '123456:prod-build-token';
const webhookSecret = 'prod-build-secret';

/** What a deployment copies: manifests, migrations, the console's files, the launcher; no TypeScript sources. */
function copyDeployment(target: string): void {
  for (const file of ['package.json', 'package-lock.json', 'scripts/run-entry.mjs']) cpSync(join(repoRoot, file), join(target, file), { recursive: true });
  for (const dir of ['migrations', 'apps/gateway/public']) cpSync(join(repoRoot, dir), join(target, dir), { recursive: true });
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(join(repoRoot, group))) {
      const manifest = join(group, name, 'package.json');
      if (!existsSync(join(repoRoot, manifest))) continue;
      mkdirSync(join(target, group, name), { recursive: true });
      cpSync(join(repoRoot, manifest), join(target, manifest));
    }
  }
}

// The MCP SDK too: a worker without MCP_SERVERS loads nothing of it (packages/agent's mcp-server-link.ts imports it lazily).
const sdkPackages = /node_modules\/(@slack\/web-api|@discordjs\/rest|discord-api-types|@modelcontextprotocol\/sdk)\//;

/** Which platform SDKs the modules a process loaded carry: a package's own file, or a chunk of dist/ whose source map lists one. */
function readLoadedSdks(loadsLog: string): string[] {
  const urls = existsSync(loadsLog) ? new Set(readFileSync(loadsLog, 'utf8').split('\n').filter(Boolean)) : new Set<string>();
  const found = new Set<string>();
  for (const url of urls) {
    const file = fileURLToPath(url);
    const sources = existsSync(`${file}.map`) ? (JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] }).sources : [file];
    for (const source of sources) {
      const sdk = sdkPackages.exec(source)?.[1];
      if (sdk) found.add(sdk);
    }
  }
  return [...found].sort();
}

function readLoads(loadsLog: string): string[] {
  return existsSync(loadsLog) ? readFileSync(loadsLog, 'utf8').split('\n').filter(Boolean) : [];
}

const adminPackages = /node_modules\/(@fastify\/swagger|@fastify\/swagger-ui|@fastify\/static|@bull-board\/api|@bull-board\/fastify)\//;

/** Which of the admin's packages (external to the bundle, loaded from node_modules) a process loaded. */
function readLoadedAdminPackages(loadsLog: string): string[] {
  return [...new Set(readLoads(loadsLog).flatMap((url) => adminPackages.exec(fileURLToPath(url))?.[1] ?? []))].sort();
}

async function sizeInMiB(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-sk', dir]);
  return Number(stdout.split('\t')[0]) / 1024;
}

async function createEmptyDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('pgAdminUrl');
  const name = `sb_prod_${process.pid}_${Date.now()}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  await admin`create database ${admin(name)}`;
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const sql = postgres(adminUrl, { max: 1, onnotice: () => undefined });
      await sql`drop database if exists ${sql(name)} with (force)`;
      await sql.end();
    },
  };
}

// `npm run build` then a production install (`npm ci --omit=dev`) of only
// what a deployment ships: migrate, gateway, worker and the simulator run
// from dist/ with no tsx and no dev packages, and answer a Telegram message.
describe('the production build', () => {
  const started: ManagedProcess[] = [];
  let deployDir = '';
  let database: Awaited<ReturnType<typeof createEmptyDatabase>> | undefined;

  beforeAll(async () => {
    deployDir = createScratchDir('prod-build');
    copyDeployment(deployDir);
    await run(process.execPath, [join(repoRoot, 'scripts/build.mjs'), '--outdir', join(deployDir, 'dist')], { cwd: repoRoot });
    // --prefer-offline: the packages are in npm's cache from the checkout's own install.
    await run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: deployDir, maxBuffer: 16 * 1024 * 1024 });
    database = await createEmptyDatabase();
  }, 240_000);

  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop()));
    await database?.drop();
  });

  it('ships no dev tools and stays under 150 MB of node_modules', async () => {
    for (const devOnly of ['tsx', 'vitest', 'eslint', 'drizzle-kit', 'playwright-core', 'esbuild']) {
      expect(existsSync(join(deployDir, 'node_modules', devOnly)), devOnly).toBe(false);
    }
    expect(await sizeInMiB(join(deployDir, 'node_modules'))).toBeLessThanOrEqual(150);
  });

  // The worker's token table (o200k ranks, read from dist/) is read on its first count, not at start, and the
  // Slack and Discord SDKs only where those platforms are configured: idle processes stay small
  // (docs/benchmarks.md, "Memory from the production build").
  it('migrates, starts and answers a Telegram message end to end, reading the token table only for that turn and no Slack or Discord SDK or admin package', async () => {
    const readsLog = join(deployDir, 'ranks-reads.log');
    const ranksReads = () => (existsSync(readsLog) ? readFileSync(readsLog, 'utf8').split('\n').filter(Boolean) : []);
    const env = { DATABASE_URL: database!.url, REDIS_URL: redisUrl(), REDIS_PREFIX: createRedisPrefix(), LOG_LEVEL: 'warn', TELEGRAM_BOT_TOKEN: botToken, TELEGRAM_WEBHOOK_SECRET: webhookSecret };
    const launch = (name: string, extra: Record<string, string>, label = name) => {
      const child = spawnCommand({ name: `prod-${label}`, command: process.execPath, args: [join(deployDir, 'scripts/run-entry.mjs'), name], env: { ...env, ...extra }, logDir: 'test-results/logs', cwd: deployDir });
      started.push(child);
      return child;
    };
    const migrate = launch('migrate', {});
    expect(await new Promise((resolve) => migrate.child.once('exit', resolve))).toBe(0);

    const [simPort, gatewayPort, workerPort] = [await getFreePort(), await getFreePort(), await getFreePort()];
    const simUrl = `http://127.0.0.1:${simPort}`;
    const slackBotToken = 'xoxb-prod-build';
    const sim = launch('sim', { PORT: String(simPort), HOST: '127.0.0.1', SIM_TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${gatewayPort}/webhooks/telegram`, SLACK_BOT_TOKEN: slackBotToken });
    await waitForHttp(`${simUrl}/control/discord/bot`, 30_000, sim);
    // Every module each process loads, to see whether any carries a platform SDK.
    const loadsLog = (name: string) => join(deployDir, `${name}-loads.log`);
    const recordLoads = (name: string) => ({ RECORD_LOADS_TO: loadsLog(name) });
    const importing = (...files: string[]) => ({ NODE_OPTIONS: files.map((file) => `--import ${join(repoRoot, 'test/support', file)}`).join(' ') });
    const gateway = launch('gateway', { PORT: String(gatewayPort), HOST: '127.0.0.1', TELEGRAM_API_ROOT: simUrl, ...importing('record-module-loads.mjs'), ...recordLoads('gateway') });
    await waitForHttp(`http://127.0.0.1:${gatewayPort}/healthz`, 30_000, gateway);
    const countReads = { ...importing('count-file-reads.mjs', 'record-module-loads.mjs'), COUNT_READS_OF: 'o200k_base.tiktoken', COUNT_READS_TO: readsLog, ...recordLoads('worker') };
    const worker = launch('worker', { WORKER_PORT: String(workerPort), TELEGRAM_API_ROOT: simUrl, MODEL_BASE_URL: `${simUrl}/v1`, MODEL_API_KEY: 'sk-sim', ...countReads });
    await waitForHttp(`http://127.0.0.1:${workerPort}/healthz`, 30_000, worker);
    expect(ranksReads()).toEqual([]);
    expect(readLoadedSdks(loadsLog('gateway'))).toEqual([]);
    expect(readLoadedSdks(loadsLog('worker'))).toEqual([]);

    const update = await fetch(`${simUrl}/control/telegram/updates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat: { id: 4242, type: 'private' }, from: { id: 4242, first_name: 'Prod' }, text: 'hello from a production build' }),
    });
    expect(((await update.json()) as { status: number }).status).toBe(200);
    const reply = await fetch(`${simUrl}/control/telegram/wait?chat_id=4242&count=1&timeout_ms=20000`);
    expect(reply.status).toBe(200);
    const sent = (await reply.json()) as { text: string }[];
    expect(sent).toHaveLength(1);
    expect(sent[0]!.text.length).toBeGreaterThan(0);
    // Once, from the build's own copy: production installs no gpt-tokenizer.
    expect(ranksReads()).toEqual([join(deployDir, 'dist', 'o200k_base.tiktoken')]);
    // The recorder saw the bundle itself, so the empty lists below are not for want of looking.
    expect(readLoads(loadsLog('worker'))).toContain(`file://${join(deployDir, 'dist', 'worker.js')}`);
    expect(readLoadedSdks(loadsLog('gateway'))).toEqual([]);
    expect(readLoadedSdks(loadsLog('worker'))).toEqual([]);
    // No ADMIN_TOKEN: no admin routes, and none of their packages loaded.
    expect(readLoadedAdminPackages(loadsLog('gateway'))).toEqual([]);

    // A gateway configured for Slack asks auth.test at start (its own user id), through @slack/web-api; Discord stays
    // unloaded. With ADMIN_TOKEN set it loads the admin's packages and serves the admin (its API docs among them).
    const slackGatewayPort = await getFreePort();
    const adminToken = 'prod-build-admin-token-0123456789';
    const slackGateway = launch('gateway', {
      PORT: String(slackGatewayPort),
      HOST: '127.0.0.1',
      TELEGRAM_API_ROOT: simUrl,
      ADMIN_TOKEN: adminToken,
      SLACK_BOT_TOKEN: slackBotToken,
      SLACK_SIGNING_SECRET: 'prod-build-slack-secret',
      SLACK_API_URL: `${simUrl}/api/`,
      ...importing('record-module-loads.mjs'),
      ...recordLoads('slack-gateway'),
    }, 'slack-gateway');
    await waitForHttp(`http://127.0.0.1:${slackGatewayPort}/healthz`, 30_000, slackGateway);
    expect(readLoadedSdks(loadsLog('slack-gateway'))).toEqual(['@slack/web-api']);
    const docs = await fetch(`http://127.0.0.1:${slackGatewayPort}/admin/openapi.json`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(docs.status).toBe(200);
    expect(readLoadedAdminPackages(loadsLog('slack-gateway'))).toEqual(['@bull-board/api', '@bull-board/fastify', '@fastify/static', '@fastify/swagger', '@fastify/swagger-ui']);
  }, 120_000);
});
