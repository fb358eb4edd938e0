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

/** One process of the system: its name, entry point (relative to the repository), environment and health check. */
interface ProcessSpec {
  name: string;
  entry: string;
  env: Record<string, string>;
  healthUrl: string;
}

type Launcher = (spec: ProcessSpec) => ManagedProcess;

function spawnBuilt({ name, entry, env }: ProcessSpec, logDir: string, distDir = join(repoRoot, 'dist')): ManagedProcess {
  const built = builtEntries[entry];
  if (!built) throw new Error(`no built entry for ${entry}`);
  return spawnCommand({ name, command: process.execPath, args: ['--enable-source-maps', join(distDir, `${built}.js`)], env, logDir });
}

/** How every process of the system starts (and starts again): profiled, from dist/, or from the sources under tsx. */
function chooseLauncher(options: SystemOptions, logDir: string): Launcher {
  const { profileDir } = options;
  if (profileDir) return (spec) => spawnProfiledApp({ ...spec, logDir, profileDir: join(profileDir, spec.name) });
  if (options.built) return (spec) => spawnBuilt(spec, logDir, options.distDir);
  return (spec) => spawnApp(spec.name, spec.entry, spec.env, logDir);
}

interface BenchDatabase {
  admin: postgres.Sql;
  name: string;
  url: string;
}

async function createBenchDatabase(adminUrl: string, systemName: string): Promise<BenchDatabase> {
  const name = `sb_bench_${systemName.replace(/\W/g, '_')}_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  await admin`drop database if exists ${admin(name)} with (force)`;
  await admin`create database ${admin(name)}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await migrateDatabase(url.toString());
  return { admin, name, url: url.toString() };
}

async function dropBenchDatabase({ admin, name }: BenchDatabase): Promise<void> {
  await admin`drop database if exists ${admin(name)} with (force)`;
  await admin.end({ timeout: 5 });
}

const localUrl = (port: number) => `http://127.0.0.1:${port}`;
const freePorts = (count: number) => Promise.all(Array.from({ length: count }, () => getFreePort()));

interface SystemUrls {
  inboundSimUrls: string[];
  gatewayUrls: string[];
  workerUrls: string[];
}

/** The environment every process shares: the database, Redis, Telegram and the model at the first simulator, and the other platforms asked for. */
function sharedEnv(system: { databaseUrl: string; redisUrl: string; redisPrefix: string; simUrl: string }, platforms: readonly string[] = []): Record<string, string> {
  const { simUrl } = system;
  // Replies go to the first simulator; Discord's one Gateway connection is to it as well.
  return {
    DATABASE_URL: system.databaseUrl,
    REDIS_URL: system.redisUrl,
    REDIS_PREFIX: system.redisPrefix,
    LOG_LEVEL: 'warn',
    TELEGRAM_BOT_TOKEN: benchBotToken,
    TELEGRAM_WEBHOOK_SECRET: benchWebhookSecret,
    TELEGRAM_API_ROOT: simUrl,
    MODEL_BASE_URL: `${simUrl}/v1`,
    ...(platforms.includes('slack') ? { SLACK_SIGNING_SECRET: slack.signingSecret, SLACK_BOT_TOKEN: slack.botToken, SLACK_API_URL: `${simUrl}/api/` } : {}),
    ...(platforms.includes('discord') ? { DISCORD_BOT_TOKEN: discord.botToken, DISCORD_APPLICATION_ID: discord.applicationId, DISCORD_API_URL: `${simUrl}/api` } : {}),
  };
}

/** The sims, gateways and workers to start, each with its port in its environment. */
function planProcesses(urls: SystemUrls, env: Record<string, string>, options: SystemOptions): { sims: ProcessSpec[]; gateways: ProcessSpec[]; workers: ProcessSpec[] } {
  const withSlack = options.platforms?.includes('slack') ?? false;
  const portOf = (url: string) => new URL(url).port;
  const sims = urls.inboundSimUrls.map((simUrl, i) => ({
    name: `sim-${i}`,
    entry: 'apps/sim/src/main.ts',
    env: {
      ...env,
      PORT: portOf(simUrl),
      LOG_LEVEL: 'error',
      SIM_TELEGRAM_WEBHOOK_URL: `${urls.gatewayUrls[i]}/webhooks/telegram`,
      ...(withSlack ? { SIM_SLACK_EVENTS_URL: `${urls.gatewayUrls[i]}/webhooks/slack/events` } : {}),
    },
    healthUrl: `${simUrl}/control/health`,
  }));
  // Replays and benchmarks send at machine speed, far past any person's pace: the per-user courtesy limit
  // (30 messages a minute by default) would answer them with a notice instead of a turn.
  const gatewayEnv = { USER_RATE_LIMIT_PER_MINUTE: '0', ...options.gatewayEnv };
  const gateways = urls.gatewayUrls.map((url, i) => ({ name: `gateway-${i}`, entry: 'apps/gateway/src/main.ts', env: { ...env, ...gatewayEnv, PORT: portOf(url) }, healthUrl: `${url}/readyz` }));
  const workers = urls.workerUrls.map((url, i) => ({ name: `worker-${i}`, entry: 'apps/worker/src/main.ts', env: { ...env, ...options.workerEnv, WORKER_PORT: portOf(url) }, healthUrl: `${url}/healthz` }));
  return { sims, gateways, workers };
}

/** The running processes by role; startAgain replaces a process in place, so every holder of these arrays sees the fresh one. */
interface RunningSystem {
  sims: ManagedProcess[];
  gateways: ManagedProcess[];
  workers: ManagedProcess[];
  processes: ManagedProcess[];
  specs: Map<string, ProcessSpec>;
  launch: Launcher;
}

async function stopProcesses({ sims, gateways, workers }: RunningSystem): Promise<void> {
  // Workers first, so none is mid-turn when its gateway or simulator disappears.
  await Promise.all(workers.map((p) => p.stop()));
  await Promise.all([...gateways, ...sims].map((p) => p.stop()));
}

async function startAgain(running: RunningSystem, old: ManagedProcess): Promise<ManagedProcess> {
  const spec = running.specs.get(old.name);
  if (!spec) throw new Error(`startAgain: ${old.name} was not started by this system`);
  await old.stop('SIGKILL');
  const fresh = running.launch(spec);
  // Replaced in place, so close() stops the new process and callers holding the arrays see it.
  for (const list of [running.sims, running.gateways, running.workers, running.processes]) {
    const index = list.indexOf(old);
    if (index >= 0) list[index] = fresh;
  }
  await waitForHttp(spec.healthUrl, 90_000, fresh);
  return fresh;
}

/** Spawns every process (sims, then gateways, then workers) and waits until each answers its health check; stops them all if one does not. */
async function launchAll(planned: ReturnType<typeof planProcesses>, launch: Launcher): Promise<RunningSystem> {
  const all = [...planned.sims, ...planned.gateways, ...planned.workers];
  const [sims, gateways, workers] = [planned.sims.map(launch), planned.gateways.map(launch), planned.workers.map(launch)];
  const running: RunningSystem = { sims, gateways, workers, processes: [...sims, ...gateways, ...workers], specs: new Map(all.map((spec) => [spec.name, spec])), launch };
  try {
    // Started together: each tsx start-up takes a second or two, and they do not depend on each other to boot.
    await Promise.all(all.map((spec, i) => waitForHttp(spec.healthUrl, 90_000, running.processes[i])));
  } catch (error) {
    await stopProcesses(running);
    throw error;
  }
  return running;
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
  const database = await createBenchDatabase(adminUrl, name);
  const gatewayCount = options.gateways ?? 1;
  const urls: SystemUrls = {
    inboundSimUrls: (await freePorts(gatewayCount)).map(localUrl),
    gatewayUrls: (await freePorts(gatewayCount)).map(localUrl),
    workerUrls: (await freePorts(options.workers)).map(localUrl),
  };
  const simUrl = urls.inboundSimUrls[0] as string;
  const redisPrefix = `bench-${name}-${process.pid}`;
  const env = sharedEnv({ databaseUrl: database.url, redisUrl, redisPrefix, simUrl }, options.platforms);
  const launch = chooseLauncher(options, join(repoRoot, '.data', options.logRoot ?? 'bench-logs', name));
  let running: RunningSystem;
  try {
    running = await launchAll(planProcesses(urls, env, options), launch);
  } catch (error) {
    await dropBenchDatabase(database);
    throw error;
  }
  return {
    ...urls,
    simUrl,
    gatewayUrl: urls.gatewayUrls[0] as string,
    databaseUrl: database.url,
    databaseName: database.name,
    redisUrl,
    redisPrefix,
    sims: running.sims,
    gateways: running.gateways,
    workers: running.workers,
    processes: running.processes,
    startAgain: (old) => startAgain(running, old),
    async close() {
      await stopProcesses(running);
      await dropBenchDatabase(database);
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
