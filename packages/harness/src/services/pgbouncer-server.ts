import { chownSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { delay, hasExited, spawnServer, stopChild, tailLog } from './child-server.ts';
import { HarnessError } from './harness-error.ts';
import { getFreePort } from './ports.ts';
import { resolveServerUser } from './postgres-server.ts';
import { createScratchDir } from './scratch-dir.ts';

/** Debian's binary (`apt-get install pgbouncer`); PGBOUNCER_BIN overrides. */
const defaultBinary = '/usr/sbin/pgbouncer';
const readyTimeoutMs = 15_000;

export interface PgBouncerServer {
  readonly port: number;
  /** A URL for `db` through the pooler: postgres://postgres@127.0.0.1:PORT/db */
  urlFor(db: string): string;
  /** Stops the pooler and removes its files. */
  destroy(): Promise<void>;
}

export interface StartPgBouncerOptions {
  /** The Postgres behind it, on 127.0.0.1 (trust authentication, as the harness starts it). */
  postgresPort: number;
  /** `transaction` (the mode the issue names) unless given. */
  poolMode?: 'session' | 'transaction' | 'statement';
  /** Server connections per database and user (default_pool_size); 20 unless given. Fewer: clients share them more. */
  poolSize?: number;
}

/**
 * PgBouncer on loopback in front of a harness Postgres, for the tests of
 * DATABASE_URL behind a transaction pooler (docs/services.md, "Postgres
 * behind PgBouncer"). Not daemonised, so a crashed run takes it along; as
 * root it runs as the `postgres` user (PgBouncer refuses root too).
 */
export async function startPgBouncer(options: StartPgBouncerOptions): Promise<PgBouncerServer> {
  const binary = process.env.PGBOUNCER_BIN ?? defaultBinary;
  if (!existsSync(binary)) throw new HarnessError('SERVICE_MISSING', `pgbouncer not found at ${binary}: install it with \`apt-get install -y pgbouncer\``);
  const port = await getFreePort();
  const baseDir = createScratchDir('sb-pgb-', 'pgbouncer.pid');
  const runAs = resolveServerUser();
  const logFile = join(baseDir, 'pgbouncer.log');
  const iniFile = join(baseDir, 'pgbouncer.ini');
  writeFileSync(iniFile, renderIni({ baseDir, port, postgresPort: options.postgresPort, poolMode: options.poolMode ?? 'transaction', poolSize: options.poolSize ?? 20 }));
  if (runAs) chownSync(baseDir, runAs.uid, runAs.gid);
  const child = spawnServer(binary, [iniFile], { cwd: baseDir, logFile, exitSignal: 'SIGINT', ...runAs });
  try {
    await waitForPort(child, port, logFile);
  } catch (error) {
    await stopChild(child, 'SIGKILL', 2_000);
    rmSync(baseDir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    urlFor: (db) => `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(db)}`,
    async destroy() {
      // SIGINT: PgBouncer's safe shutdown (waits for transactions); SIGKILL after the timeout.
      await stopChild(child, 'SIGINT', 5_000);
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

/**
 * `auth_type = any`: the harness's Postgres trusts loopback, so the pooler
 * logs every client in as `postgres` (auth_type any needs the user fixed per database). `ignore_startup_parameters`: postgres.js sends
 * `extra_float_digits` at connect, which PgBouncer refuses unless told to let
 * it through. No Unix socket: loopback TCP only.
 */
function renderIni(where: { baseDir: string; port: number; postgresPort: number; poolMode: string; poolSize: number }): string {
  return [
    '[databases]',
    `* = host=127.0.0.1 port=${where.postgresPort} user=postgres`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${where.port}`,
    "unix_socket_dir = ''",
    'auth_type = any',
    `pool_mode = ${where.poolMode}`,
    'max_client_conn = 500',
    `default_pool_size = ${where.poolSize}`,
    'ignore_startup_parameters = extra_float_digits,options',
    `pidfile = ${join(where.baseDir, 'pgbouncer.pid')}`,
    '',
  ].join('\n');
}

async function waitForPort(child: ChildProcess, port: number, logFile: string): Promise<void> {
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (hasExited(child)) throw new HarnessError('SERVICE_START_FAILED', `pgbouncer exited during start-up: ${tailLog(logFile)}`);
    if (await isListening(port)) return;
    await delay(25);
  }
  throw new HarnessError('SERVICE_START_FAILED', `pgbouncer not listening on ${port} after ${readyTimeoutMs / 1000}s: ${tailLog(logFile)}`);
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
