import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import postgres from 'postgres';
import { migrateDatabase } from '@switchboard/db';
import { getFreePort, repoRoot, spawnApp, waitForHttp, type ManagedProcess } from '../../../../scripts/lib/processes.ts';

export const benchBotToken = '424242:bench-token';
const webhookSecret = 'bench-secret';

export interface SystemUnderTest {
  simUrl: string;
  gatewayUrl: string;
  databaseUrl: string;
  processes: ManagedProcess[];
  close(): Promise<void>;
}

export interface SystemOptions {
  workers: number;
  workerEnv?: Record<string, string>;
}

/**
 * Postgres and Redis from scripts/services.sh (installed and started if
 * missing), a throwaway database, and sim + gateway + workers as separate
 * processes, as they would run in production.
 */
export async function startSystemUnderTest(name: string, options: SystemOptions): Promise<SystemUnderTest> {
  const services = execFileSync('bash', [join(repoRoot, 'scripts/services.sh'), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const adminUrl = /DATABASE_URL=([^\s'"]+)/.exec(services)?.[1] ?? 'postgres://switchboard@127.0.0.1:54329/switchboard';
  const redisUrl = /REDIS_URL=([^\s'"]+)/.exec(services)?.[1] ?? 'redis://127.0.0.1:63799';
  const dbName = `sb_bench_${name}_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  await admin`drop database if exists ${admin(dbName)} with (force)`;
  await admin`create database ${admin(dbName)}`;
  const databaseUrl = new URL(adminUrl);
  databaseUrl.pathname = `/${dbName}`;
  await migrateDatabase(databaseUrl.toString());

  const logDir = join(repoRoot, '.data', 'bench-logs', name);
  const [simPort, gatewayPort] = [await getFreePort(), await getFreePort()];
  const simUrl = `http://127.0.0.1:${simPort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const env = {
    DATABASE_URL: databaseUrl.toString(),
    REDIS_URL: redisUrl,
    REDIS_PREFIX: `bench-${name}-${process.pid}`,
    LOG_LEVEL: 'warn',
    TELEGRAM_BOT_TOKEN: benchBotToken,
    TELEGRAM_WEBHOOK_SECRET: webhookSecret,
    TELEGRAM_API_ROOT: simUrl,
    MODEL_BASE_URL: `${simUrl}/v1`,
  };
  const processes: ManagedProcess[] = [];
  const sim = spawnApp('sim', 'apps/sim/src/main.ts', { ...env, PORT: String(simPort), LOG_LEVEL: 'error' }, logDir);
  processes.push(sim);
  await waitForHttp(`${simUrl}/control/health`, 30_000, sim);
  const gateway = spawnApp('gateway', 'apps/gateway/src/main.ts', { ...env, PORT: String(gatewayPort) }, logDir);
  processes.push(gateway);
  for (let i = 0; i < options.workers; i++) {
    const port = await getFreePort();
    const worker = spawnApp(`worker-${i}`, 'apps/worker/src/main.ts', { ...env, ...options.workerEnv, WORKER_PORT: String(port) }, logDir);
    processes.push(worker);
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 30_000, worker);
  }
  await waitForHttp(`${gatewayUrl}/readyz`, 30_000, gateway);
  await postJson(`${simUrl}/bot${benchBotToken}/setWebhook`, { url: `${gatewayUrl}/webhooks/telegram`, secret_token: webhookSecret });

  return {
    simUrl,
    gatewayUrl,
    databaseUrl: databaseUrl.toString(),
    processes,
    async close() {
      await Promise.all(processes.reverse().map((p) => p.stop()));
      await admin`drop database if exists ${admin(dbName)} with (force)`;
      await admin.end({ timeout: 5 });
    },
  };
}

export async function postJson<T = unknown>(url: string, body: unknown): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url.replace(/bot[^/]+/, 'bot<token>')} answered ${response.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function getJson<T = unknown>(url: string): Promise<T> {
  const response = await fetch(url);
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}
