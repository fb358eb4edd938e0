import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import postgres from 'postgres';
import { migrateDatabase } from '@switchboard/db';
import { getFreePort, repoRoot, spawnApp, waitForHttp, type ManagedProcess } from '../../../../scripts/lib/processes.ts';

export const benchBotToken = '424242:bench-token';
export const benchWebhookSecret = 'bench-secret';

export interface SystemUnderTest {
  /** The simulator the workers talk to: Bot API and model; replies are recorded here. */
  simUrl: string;
  /** One simulator per gateway, each delivering webhooks to its gateway; [0] is simUrl. */
  inboundSimUrls: string[];
  gatewayUrl: string;
  gatewayUrls: string[];
  databaseUrl: string;
  sims: ManagedProcess[];
  gateways: ManagedProcess[];
  workers: ManagedProcess[];
  processes: ManagedProcess[];
  close(): Promise<void>;
}

export interface SystemOptions {
  gateways?: number;
  workers: number;
  workerEnv?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
  /** Logs go to .data/<logRoot>/<name>/ (default bench-logs). */
  logRoot?: string;
}

/**
 * Postgres and Redis from scripts/services.sh (installed and started if
 * missing), a throwaway database, and sims + gateways + workers as separate
 * processes, as they would run in production.
 *
 * Several gateways: the simulated Telegram has one webhook URL, so each
 * gateway gets a simulator of its own in front of it. Only the first one is
 * the Bot API and the model (every worker points at it), so all replies are
 * recorded in one place; the others only deliver updates.
 */
export async function startSystemUnderTest(name: string, options: SystemOptions): Promise<SystemUnderTest> {
  const services = execFileSync('bash', [join(repoRoot, 'scripts/services.sh'), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const adminUrl = /DATABASE_URL=([^\s'"]+)/.exec(services)?.[1] ?? 'postgres://switchboard@127.0.0.1:54329/switchboard';
  const redisUrl = /REDIS_URL=([^\s'"]+)/.exec(services)?.[1] ?? 'redis://127.0.0.1:63799';
  const dbName = `sb_bench_${name.replace(/\W/g, '_')}_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  await admin`drop database if exists ${admin(dbName)} with (force)`;
  await admin`create database ${admin(dbName)}`;
  const databaseUrl = new URL(adminUrl);
  databaseUrl.pathname = `/${dbName}`;
  await migrateDatabase(databaseUrl.toString());

  const gatewayCount = options.gateways ?? 1;
  const logDir = join(repoRoot, '.data', options.logRoot ?? 'bench-logs', name);
  const simPorts = await Promise.all(Array.from({ length: gatewayCount }, () => getFreePort()));
  const gatewayPorts = await Promise.all(Array.from({ length: gatewayCount }, () => getFreePort()));
  const inboundSimUrls = simPorts.map((port) => `http://127.0.0.1:${port}`);
  const gatewayUrls = gatewayPorts.map((port) => `http://127.0.0.1:${port}`);
  const simUrl = inboundSimUrls[0] as string;
  const env = {
    DATABASE_URL: databaseUrl.toString(),
    REDIS_URL: redisUrl,
    REDIS_PREFIX: `bench-${name}-${process.pid}`,
    LOG_LEVEL: 'warn',
    TELEGRAM_BOT_TOKEN: benchBotToken,
    TELEGRAM_WEBHOOK_SECRET: benchWebhookSecret,
    TELEGRAM_API_ROOT: simUrl,
    MODEL_BASE_URL: `${simUrl}/v1`,
  };

  const sims = simPorts.map((port, i) =>
    spawnApp(`sim-${i}`, 'apps/sim/src/main.ts', { ...env, PORT: String(port), LOG_LEVEL: 'error', SIM_TELEGRAM_WEBHOOK_URL: `${gatewayUrls[i]}/webhooks/telegram` }, logDir),
  );
  const gateways = gatewayPorts.map((port, i) => spawnApp(`gateway-${i}`, 'apps/gateway/src/main.ts', { ...env, ...options.gatewayEnv, PORT: String(port) }, logDir));
  const workerPorts = await Promise.all(Array.from({ length: options.workers }, () => getFreePort()));
  const workers = workerPorts.map((port, i) => spawnApp(`worker-${i}`, 'apps/worker/src/main.ts', { ...env, ...options.workerEnv, WORKER_PORT: String(port) }, logDir));
  const processes = [...sims, ...gateways, ...workers];
  const stopAll = async () => {
    // Workers first, so none is mid-turn when its gateway or simulator disappears.
    await Promise.all(workers.map((p) => p.stop()));
    await Promise.all([...gateways, ...sims].map((p) => p.stop()));
  };
  try {
    // Started together: each tsx start-up takes a second or two, and they do not depend on each other to boot.
    await Promise.all([
      ...sims.map((p, i) => waitForHttp(`${inboundSimUrls[i]}/control/health`, 30_000, p)),
      ...gateways.map((p, i) => waitForHttp(`${gatewayUrls[i]}/readyz`, 30_000, p)),
      ...workers.map((p, i) => waitForHttp(`http://127.0.0.1:${workerPorts[i]}/healthz`, 30_000, p)),
    ]);
  } catch (error) {
    await stopAll();
    await admin`drop database if exists ${admin(dbName)} with (force)`;
    await admin.end({ timeout: 5 });
    throw error;
  }

  return {
    simUrl,
    inboundSimUrls,
    gatewayUrl: gatewayUrls[0] as string,
    gatewayUrls,
    databaseUrl: databaseUrl.toString(),
    sims,
    gateways,
    workers,
    processes,
    async close() {
      await stopAll();
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
