import { spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { delay, hasExited, spawnServer, stopChild, tailLog } from './child-server.ts';
import { HarnessError } from './harness-error.ts';
import { getFreePort } from './ports.ts';
import { createScratchDir } from './scratch-dir.ts';

export interface RedisServer {
  readonly port: number;
  /** redis://127.0.0.1:PORT */
  readonly url: string;
  stop(): Promise<void>;
  /** Starts again on the same port (empty: nothing is persisted, except a cluster node's nodes.conf). */
  start(): Promise<void>;
  /** SIGKILL, as a crashed machine: no shutdown, no last word to replicas or the cluster. */
  kill(): Promise<void>;
  destroy(): Promise<void>;
}

export interface StartRedisOptions {
  port?: number;
  /** More redis-server arguments (cluster mode, replicaof, sentinel), after the defaults. */
  args?: string[];
  /** A config file to start from (sentinels need one they can rewrite); placed in the scratch dir. */
  configFile?: string;
  /** Run as a Sentinel: the config file holds everything, no data-server defaults. */
  sentinel?: boolean;
}

const readyTimeoutMs = 15_000;
const stopTimeoutMs = 10_000;

export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const binary = findRedisServer();
  const port = options.port ?? (await getFreePort());
  const server = new LocalRedis({ binary, port, dir: createScratchDir('sb-redis-'), args: options.args ?? [], configFile: options.configFile, sentinel: options.sentinel ?? false });
  try {
    await server.start();
  } catch (error) {
    await server.destroy();
    throw error;
  }
  return server;
}

interface LocalRedisSpec {
  binary: string;
  port: number;
  dir: string;
  args: string[];
  configFile: string | undefined;
  sentinel: boolean;
}

class LocalRedis implements RedisServer {
  readonly url: string;
  readonly port: number;
  private readonly logFile: string;
  private child: ChildProcess | undefined;

  constructor(private readonly spec: LocalRedisSpec) {
    this.port = spec.port;
    this.url = `redis://127.0.0.1:${spec.port}`;
    this.logFile = join(spec.dir, 'redis.log');
    if (spec.configFile !== undefined) writeFileSync(join(spec.dir, 'redis.conf'), spec.configFile);
  }

  readonly start = async (): Promise<void> => {
    if (this.child && !hasExited(this.child)) return;
    // noeviction as in production: BullMQ loses jobs silently under any
    // eviction policy. --dir keeps a stray SAVE from writing into the repo.
    const { dir } = this.spec;
    const args = [
      ...(this.spec.configFile === undefined ? [] : [join(dir, 'redis.conf')]),
      '--port', String(this.port),
      '--bind', '127.0.0.1',
      '--save', '',
      '--appendonly', 'no',
      '--maxmemory-policy', 'noeviction',
      '--daemonize', 'no',
      '--dir', dir,
      '--loglevel', 'warning',
      ...this.spec.args,
    ];
    const sentinelArgs = [join(dir, 'redis.conf'), '--sentinel', '--port', String(this.port), '--bind', '127.0.0.1', '--dir', dir, ...this.spec.args];
    const child = spawnServer(this.spec.binary, this.spec.sentinel ? sentinelArgs : args, { cwd: dir, logFile: this.logFile, exitSignal: 'SIGKILL' });
    this.child = child;
    await this.waitUntilReady(child);
  };

  readonly stop = async (): Promise<void> => {
    const child = this.child;
    this.child = undefined;
    if (child) await stopChild(child, 'SIGTERM', stopTimeoutMs);
  };

  readonly kill = async (): Promise<void> => {
    const child = this.child;
    this.child = undefined;
    if (child) await stopChild(child, 'SIGKILL', stopTimeoutMs);
  };

  readonly destroy = async (): Promise<void> => {
    await this.stop();
    rmSync(this.spec.dir, { recursive: true, force: true });
  };

  private async waitUntilReady(child: ChildProcess): Promise<void> {
    const deadline = Date.now() + readyTimeoutMs;
    let lastError = 'no attempt made';
    while (Date.now() < deadline) {
      if (hasExited(child)) {
        throw new HarnessError(
          'SERVICE_START_FAILED',
          `redis-server on port ${this.port} exited during start-up: ${tailLog(this.logFile)}`,
        );
      }
      const client = new Redis(this.port, '127.0.0.1', {
        lazyConnect: true,
        connectTimeout: 1_000,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      // Connection errors also arrive as events; without a listener ioredis logs them as unhandled.
      client.on('error', () => undefined);
      try {
        await client.connect();
        if ((await client.ping()) === 'PONG') return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
      } finally {
        client.disconnect();
      }
      await delay(20);
    }
    await stopChild(child, 'SIGKILL', stopTimeoutMs);
    throw new HarnessError(
      'SERVICE_START_FAILED',
      `redis-server on port ${this.port} not ready after ${readyTimeoutMs / 1000}s (${lastError}): ${tailLog(this.logFile)}`,
    );
  }
}

function findRedisServer(): string {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    throw new HarnessError('SERVICE_MISSING', 'redis-server not found: install it with `apt-get install -y redis-server`');
  }
  return 'redis-server';
}
