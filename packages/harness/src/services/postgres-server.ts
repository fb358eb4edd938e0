import { spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import postgres from 'postgres';
import { delay, hasExited, spawnServer, stopChild, tailLog } from './child-server.ts';
import { HarnessError } from './harness-error.ts';
import { getFreePort } from './ports.ts';
import { createScratchDir } from './scratch-dir.ts';

export interface PostgresServer {
  readonly port: number;
  /** Superuser URL on the `postgres` database: postgres://postgres@127.0.0.1:PORT/postgres */
  readonly adminUrl: string;
  readonly dataDir: string;
  urlFor(db: string): string;
  /** Fast shutdown; the data directory is kept so start() can bring it back. */
  stop(): Promise<void>;
  /** Starts again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops and removes every file the server had. */
  destroy(): Promise<void>;
}

export interface StartPostgresOptions {
  port?: number;
  /** More `-c name=value` server settings, e.g. `shared_preload_libraries=pg_stat_statements` for a test that counts statements. */
  settings?: string[];
}

export interface UnixIds {
  uid: number;
  gid: number;
}

const readyTimeoutMs = 30_000;
const stopTimeoutMs = 15_000;

// Durability is worthless for a throwaway cluster and costs most of its time;
// 300 connections because every test file runs its own pools side by side.
const serverSettings = [
  'listen_addresses=127.0.0.1',
  'fsync=off',
  'synchronous_commit=off',
  'full_page_writes=off',
  'max_connections=300',
];

export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const binDir = findPostgresBinDir();
  const runAs = resolveServerUser();
  const port = options.port ?? (await getFreePort());
  const baseDir = createScratchDir('sb-pg-', join('data', 'postmaster.pid'));
  const server = new LocalPostgres({ binDir, runAs, port, baseDir, settings: [...serverSettings, ...(options.settings ?? [])] });
  try {
    await server.init();
    await server.start();
  } catch (error) {
    await server.destroy();
    throw error;
  }
  return server;
}

class LocalPostgres implements PostgresServer {
  readonly adminUrl: string;
  readonly dataDir: string;
  private readonly socketDir: string;
  private readonly logFile: string;
  private child: ChildProcess | undefined;

  private readonly binDir: string;
  private readonly runAs: UnixIds | undefined;
  readonly port: number;
  private readonly baseDir: string;
  private readonly settings: string[];

  constructor(where: { binDir: string; runAs: UnixIds | undefined; port: number; baseDir: string; settings: string[] }) {
    this.binDir = where.binDir;
    this.runAs = where.runAs;
    this.port = where.port;
    this.baseDir = where.baseDir;
    this.settings = where.settings;
    this.dataDir = join(where.baseDir, 'data');
    this.socketDir = join(where.baseDir, 'socket');
    this.logFile = join(where.baseDir, 'postgres.log');
    this.adminUrl = this.urlFor('postgres');
  }

  readonly urlFor = (db: string): string => `postgres://postgres@127.0.0.1:${this.port}/${encodeURIComponent(db)}`;

  async init(): Promise<void> {
    mkdirSync(this.socketDir);
    if (this.runAs) {
      for (const dir of [this.baseDir, this.socketDir]) chownSync(dir, this.runAs.uid, this.runAs.gid);
      assertReachableByServerUser(this.baseDir, this.runAs);
    }
    // --locale=C works with UTF8 on every machine; a UTF-8 locale may not be generated.
    const args = ['-D', this.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'];
    const initdb = spawnServer(join(this.binDir, 'initdb'), args, this.spawnOptions());
    const code = await new Promise<number | null>((resolve) => {
      initdb.once('exit', (exitCode) => resolve(exitCode));
      initdb.once('error', () => resolve(null));
    });
    if (code !== 0) {
      throw new HarnessError('SERVICE_START_FAILED', `initdb failed (exit ${code}): ${tailLog(this.logFile)}`);
    }
  }

  readonly start = async (): Promise<void> => {
    if (this.child && !hasExited(this.child)) return;
    const settings = this.settings.flatMap((setting) => ['-c', setting]);
    const args = ['-D', this.dataDir, '-p', String(this.port), '-k', this.socketDir, ...settings];
    const child = spawnServer(join(this.binDir, 'postgres'), args, this.spawnOptions());
    this.child = child;
    await this.waitUntilReady(child);
  };

  readonly stop = async (): Promise<void> => {
    const child = this.child;
    this.child = undefined;
    // SIGINT is Postgres's "fast" shutdown: roll back sessions, checkpoint, exit.
    if (child) await stopChild(child, 'SIGINT', stopTimeoutMs);
  };

  readonly destroy = async (): Promise<void> => {
    await this.stop();
    rmSync(this.baseDir, { recursive: true, force: true });
  };

  private spawnOptions() {
    return { cwd: this.baseDir, logFile: this.logFile, exitSignal: 'SIGQUIT' as const, ...this.runAs };
  }

  private async waitUntilReady(child: ChildProcess): Promise<void> {
    const deadline = Date.now() + readyTimeoutMs;
    let lastError = 'no attempt made';
    while (Date.now() < deadline) {
      if (hasExited(child)) {
        throw new HarnessError(
          'SERVICE_START_FAILED',
          `postgres on port ${this.port} exited during start-up: ${tailLog(this.logFile)}`,
        );
      }
      const sql = postgres(this.adminUrl, { max: 1, connect_timeout: 2, onnotice: () => undefined });
      try {
        await sql`select 1`;
        return;
      } catch (error) {
        // Refused until the socket is bound, then 57P03 "starting up" until recovery ends.
        lastError = error instanceof Error ? error.message : String(error);
      } finally {
        await sql.end({ timeout: 1 });
      }
      await delay(25);
    }
    await stopChild(child, 'SIGQUIT', stopTimeoutMs);
    throw new HarnessError(
      'SERVICE_START_FAILED',
      `postgres on port ${this.port} not ready after ${readyTimeoutMs / 1000}s (${lastError}): ${tailLog(this.logFile)}`,
    );
  }
}

/**
 * pg_config first (it names the version the machine was set up with), then
 * Debian's per-version directories, which are not on PATH, newest first,
 * then PATH. A candidate counts only if it has the server binaries: pg_config
 * from libpq-dev can point at a version whose server is not installed.
 */
export function findPostgresBinDir(): string {
  const candidates: string[] = [];
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0) candidates.push(pgConfig.stdout.trim());
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const versions = readdirSync(debianRoot)
      .filter((name) => /^\d+(\.\d+)?$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => join(debianRoot, version, 'bin')));
  }
  candidates.push(...(process.env.PATH ?? '').split(delimiter).filter(Boolean));
  const found = candidates.find((dir) => ['initdb', 'postgres'].every((name) => existsSync(join(dir, name))));
  if (found === undefined) {
    throw new HarnessError(
      'SERVICE_MISSING',
      'Postgres server binaries (initdb, postgres) not found: install them with `apt-get install -y postgresql`',
    );
  }
  return found;
}

/**
 * Postgres refuses to run as root, so as root the cluster belongs to the
 * `postgres` system user (the Debian package creates it; a bare machine
 * gets one here). Anyone else runs it as themselves.
 */
export function resolveServerUser(): UnixIds | undefined {
  if (process.getuid?.() !== 0) return undefined;
  let ids = lookupUser('postgres');
  if (ids === undefined) {
    spawnSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    ids = lookupUser('postgres');
  }
  if (ids === undefined) {
    throw new HarnessError(
      'SERVICE_MISSING',
      'Postgres cannot run as root and there is no `postgres` user: create one with `useradd --system --user-group postgres`',
    );
  }
  return ids;
}

function lookupUser(name: string): UnixIds | undefined {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function assertReachableByServerUser(dir: string, ids: UnixIds): void {
  const probe = spawnSync('test', ['-w', dir], { uid: ids.uid, gid: ids.gid });
  if (probe.status !== 0) {
    throw new HarnessError(
      'SERVICE_START_FAILED',
      `the postgres user cannot reach ${dir}: point TMPDIR at a directory every user can traverse (e.g. /tmp)`,
    );
  }
}
