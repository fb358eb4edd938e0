import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

  // The worker's token table (o200k ranks, read from dist/) is read on its first count, not at start:
  // idle workers stay small (docs/benchmarks.md, "Memory from the production build").
  it('migrates, starts and answers a Telegram message end to end, reading the token table only for that turn', async () => {
    const readsLog = join(deployDir, 'ranks-reads.log');
    const ranksReads = () => (existsSync(readsLog) ? readFileSync(readsLog, 'utf8').split('\n').filter(Boolean) : []);
    const env = { DATABASE_URL: database!.url, REDIS_URL: redisUrl(), REDIS_PREFIX: createRedisPrefix(), LOG_LEVEL: 'warn', TELEGRAM_BOT_TOKEN: botToken, TELEGRAM_WEBHOOK_SECRET: webhookSecret };
    const launch = (name: string, extra: Record<string, string>) => {
      const child = spawnCommand(`prod-${name}`, process.execPath, [join(deployDir, 'scripts/run-entry.mjs'), name], { ...env, ...extra }, 'test-results/logs', deployDir);
      started.push(child);
      return child;
    };
    const migrate = launch('migrate', {});
    expect(await new Promise((resolve) => migrate.child.once('exit', resolve))).toBe(0);

    const [simPort, gatewayPort, workerPort] = [await getFreePort(), await getFreePort(), await getFreePort()];
    const simUrl = `http://127.0.0.1:${simPort}`;
    const sim = launch('sim', { PORT: String(simPort), HOST: '127.0.0.1', SIM_TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${gatewayPort}/webhooks/telegram` });
    await waitForHttp(`${simUrl}/control/discord/bot`, 30_000, sim);
    const gateway = launch('gateway', { PORT: String(gatewayPort), HOST: '127.0.0.1', TELEGRAM_API_ROOT: simUrl });
    await waitForHttp(`http://127.0.0.1:${gatewayPort}/healthz`, 30_000, gateway);
    const countReads = { NODE_OPTIONS: `--import ${join(repoRoot, 'test/support/count-file-reads.mjs')}`, COUNT_READS_OF: 'o200k_base.tiktoken', COUNT_READS_TO: readsLog };
    const worker = launch('worker', { WORKER_PORT: String(workerPort), TELEGRAM_API_ROOT: simUrl, MODEL_BASE_URL: `${simUrl}/v1`, MODEL_API_KEY: 'sk-sim', ...countReads });
    await waitForHttp(`http://127.0.0.1:${workerPort}/healthz`, 30_000, worker);
    expect(ranksReads()).toEqual([]);

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
  }, 120_000);
});
