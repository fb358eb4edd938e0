import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import postgres from 'postgres';
import { migrateDatabase } from '@switchboard/db';
import { getFreePort, repoRoot, spawnApp, spawnCommand, waitForHttp, type ManagedProcess } from '@switchboard/harness';
import { readJson } from '../http-json.ts';
import { spawnProfiledApp } from './cpu-profile.ts';

export const benchBotToken = '424242:bench-token';
export const benchWebhookSecret = 'bench-secret';
export const benchSlack = { signingSecret: 'bench-slack-signing-secret', botToken: 'xoxb-bench-slack-token' };
const slack = benchSlack;
const discord = { botToken: 'bench-discord-token', applicationId: '1400000000000000001' };

export interface SystemUnderTest {
  /** The simulator the workers talk to: Bot API and model; replies are recorded here. */
  simUrl: string;
  /** One simulator per gateway, each delivering webhooks to its gateway; [0] is simUrl. */
  inboundSimUrls: string[];
  gatewayUrl: string;
  gatewayUrls: string[];
  /** Each worker's health server (`/healthz`, `/metrics`), in the order of `workers`. */
  workerUrls: string[];
  databaseUrl: string;
  /** Postgres backends show it in their command line (CPU accounting). */
  databaseName: string;
  redisUrl: string;
  /** REDIS_PREFIX of every process: the bench reads the wake-up jobs under it. */
  redisPrefix: string;
  sims: ManagedProcess[];
  gateways: ManagedProcess[];
  workers: ManagedProcess[];
  processes: ManagedProcess[];
  /** Starts a stopped (or killed) sim, gateway or worker again: same name, env and port; resolves once it answers its health check. */
  startAgain(process: ManagedProcess): Promise<ManagedProcess>;
  close(): Promise<void>;
}

export interface SystemOptions {
  /** Postgres (superuser URL on any database) and Redis to use instead of scripts/services.sh's (the chaos run brings its own, to kill). */
  services?: { adminUrl: string; redisUrl: string };
  gateways?: number;
  workers: number;
  workerEnv?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
  /** Logs go to .data/<logRoot>/<name>/ (default bench-logs). */
  logRoot?: string;
  /** Run every process under `node --cpu-prof`, profiles in <profileDir>/<process name>/. */
  profileDir?: string;
  /** Platforms to turn on besides Telegram, which is always on. */
  platforms?: readonly string[];
  /** Run sims, gateways and workers from `dist/` (`npm run build`, plain node) instead of the sources under tsx. */
  built?: boolean;
  /** With `built`: the bundles' directory (default dist/); it must lie inside the repository, so they find node_modules. */
  distDir?: string;
}

function startSharedServices(): { adminUrl: string; redisUrl: string } {
  const services = execFileSync('bash', [join(repoRoot, 'scripts/services.sh'), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return {
    adminUrl: /DATABASE_URL=([^\s'"]+)/.exec(services)?.[1] ?? 'postgres://switchboard@127.0.0.1:54329/switchboard',
    redisUrl: /REDIS_URL=([^\s'"]+)/.exec(services)?.[1] ?? 'redis://127.0.0.1:63799',
  };
}

/** dist/<name>.js that `npm run build` makes from each entry point (scripts/build.mjs). */
const builtEntries: Record<string, string> = { 'apps/sim/src/main.ts': 'sim', 'apps/gateway/src/main.ts': 'gateway', 'apps/worker/src/main.ts': 'worker' };

function spawnBuilt(name: string, entry: string, env: Record<string, string>, logDir: string, distDir = join(repoRoot, 'dist')): ManagedProcess {
  const built = builtEntries[entry];
  if (!built) throw new Error(`no built entry for ${entry}`);
  return spawnCommand(name, process.execPath, ['--enable-source-maps', join(distDir, `${built}.js`)], env, logDir);
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
  const { adminUrl, redisUrl } = options.services ?? startSharedServices();
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
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl.toString(),
    REDIS_URL: redisUrl,
    REDIS_PREFIX: `bench-${name}-${process.pid}`,
    LOG_LEVEL: 'warn',
    TELEGRAM_BOT_TOKEN: benchBotToken,
    TELEGRAM_WEBHOOK_SECRET: benchWebhookSecret,
    TELEGRAM_API_ROOT: simUrl,
    MODEL_BASE_URL: `${simUrl}/v1`,
  };

  const withSlack = options.platforms?.includes('slack') ?? false;
  const withDiscord = options.platforms?.includes('discord') ?? false;
  // Replies go to the first simulator; Discord's one Gateway connection is to it as well.
  Object.assign(
    env,
    withSlack ? { SLACK_SIGNING_SECRET: slack.signingSecret, SLACK_BOT_TOKEN: slack.botToken, SLACK_API_URL: `${simUrl}/api/` } : {},
    withDiscord ? { DISCORD_BOT_TOKEN: discord.botToken, DISCORD_APPLICATION_ID: discord.applicationId, DISCORD_API_URL: `${simUrl}/api` } : {},
  );
  const { profileDir } = options;
  const specs = new Map<string, { entry: string; env: Record<string, string>; healthUrl: string }>();
  const start = (processName: string, entry: string, processEnv: Record<string, string>, healthUrl: string) => {
    specs.set(processName, { entry, env: processEnv, healthUrl });
    return spawnFor(processName, entry, processEnv);
  };
  const spawnFor = (processName: string, entry: string, processEnv: Record<string, string>) =>
    profileDir
      ? spawnProfiledApp(processName, entry, processEnv, logDir, join(profileDir, processName))
      : options.built
        ? spawnBuilt(processName, entry, processEnv, logDir, options.distDir)
        : spawnApp(processName, entry, processEnv, logDir);
  const sims = simPorts.map((port, i) =>
    start(
      `sim-${i}`,
      'apps/sim/src/main.ts',
      {
        ...env,
        PORT: String(port),
        LOG_LEVEL: 'error',
        SIM_TELEGRAM_WEBHOOK_URL: `${gatewayUrls[i]}/webhooks/telegram`,
        ...(withSlack ? { SIM_SLACK_EVENTS_URL: `${gatewayUrls[i]}/webhooks/slack/events` } : {}),
      },
      `${inboundSimUrls[i]}/control/health`,
    ),
  );
  // Replays and benchmarks send at machine speed, far past any person's pace: the per-user courtesy limit
  // (30 messages a minute by default) would answer them with a notice instead of a turn.
  const gatewayEnv = { USER_RATE_LIMIT_PER_MINUTE: '0', ...options.gatewayEnv };
  const gateways = gatewayPorts.map((port, i) => start(`gateway-${i}`, 'apps/gateway/src/main.ts', { ...env, ...gatewayEnv, PORT: String(port) }, `${gatewayUrls[i]}/readyz`));
  const workerPorts = await Promise.all(Array.from({ length: options.workers }, () => getFreePort()));
  const workerUrls = workerPorts.map((port) => `http://127.0.0.1:${port}`);
  const workers = workerPorts.map((port, i) => start(`worker-${i}`, 'apps/worker/src/main.ts', { ...env, ...options.workerEnv, WORKER_PORT: String(port) }, `${workerUrls[i]}/healthz`));
  const processes = [...sims, ...gateways, ...workers];
  const stopAll = async () => {
    // Workers first, so none is mid-turn when its gateway or simulator disappears.
    await Promise.all(workers.map((p) => p.stop()));
    await Promise.all([...gateways, ...sims].map((p) => p.stop()));
  };
  try {
    // Started together: each tsx start-up takes a second or two, and they do not depend on each other to boot.
    await Promise.all([
      ...sims.map((p, i) => waitForHttp(`${inboundSimUrls[i]}/control/health`, 90_000, p)),
      ...gateways.map((p, i) => waitForHttp(`${gatewayUrls[i]}/readyz`, 90_000, p)),
      ...workers.map((p, i) => waitForHttp(`${workerUrls[i]}/healthz`, 90_000, p)),
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
    workerUrls,
    databaseUrl: databaseUrl.toString(),
    databaseName: dbName,
    redisUrl,
    redisPrefix: env.REDIS_PREFIX as string,
    sims,
    gateways,
    workers,
    processes,
    async startAgain(old) {
      const spec = specs.get(old.name);
      if (!spec) throw new Error(`startAgain: ${old.name} was not started by this system`);
      await old.stop('SIGKILL');
      const fresh = spawnFor(old.name, spec.entry, spec.env);
      // Replaced in place, so close() stops the new process and callers holding the arrays see it.
      for (const list of [sims, gateways, workers, processes]) {
        const index = list.indexOf(old);
        if (index >= 0) list[index] = fresh;
      }
      await waitForHttp(spec.healthUrl, 90_000, fresh);
      return fresh;
    },
    async close() {
      await stopAll();
      await admin`drop database if exists ${admin(dbName)} with (force)`;
      await admin.end({ timeout: 5 });
    },
  };
}

export interface RelayUnderTest {
  simUrl: string;
  relayUrl: string;
  processes: ManagedProcess[];
  close(): Promise<void>;
}

/** The minimal relay (minimal-relay.ts) behind its own simulator: the same sim code, nothing of Switchboard. */
export async function startRelayUnderTest(name: string): Promise<RelayUnderTest> {
  const logDir = join(repoRoot, '.data', 'bench-logs', name);
  const [simPort, relayPort] = [await getFreePort(), await getFreePort()];
  const simUrl = `http://127.0.0.1:${simPort}`;
  const relayUrl = `http://127.0.0.1:${relayPort}`;
  const env = { TELEGRAM_BOT_TOKEN: benchBotToken, TELEGRAM_WEBHOOK_SECRET: benchWebhookSecret };
  const sim = spawnApp('sim', 'apps/sim/src/main.ts', { ...env, PORT: String(simPort), LOG_LEVEL: 'error', SIM_TELEGRAM_WEBHOOK_URL: `${relayUrl}/webhooks/telegram` }, logDir);
  const relay = spawnApp('relay', 'apps/loadtest/src/bench/minimal-relay.ts', { ...env, PORT: String(relayPort), SIM_URL: simUrl }, logDir);
  const processes = [sim, relay];
  const close = async () => {
    await relay.stop();
    await sim.stop();
  };
  try {
    await Promise.all([waitForHttp(`${simUrl}/control/health`, 90_000, sim), waitForHttp(`${relayUrl}/readyz`, 90_000, relay)]);
  } catch (error) {
    await close();
    throw error;
  }
  return { simUrl, relayUrl, processes, close };
}

export async function postJson<T = unknown>(url: string, body: unknown): Promise<T> {
  return readJson<T>(url, { method: 'POST', body });
}

export async function getJson<T = unknown>(url: string): Promise<T> {
  return readJson<T>(url);
}
