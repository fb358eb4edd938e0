import { delay } from './child-server.ts';
import { HarnessError } from './harness-error.ts';
import { askRedisNode } from './redis-cluster.ts';
import { startRedis, type RedisServer } from './redis-server.ts';

/**
 * Redis under Sentinel on loopback, as operators run it: one master, one
 * replica, three sentinels with a quorum of two. Short timeouts make a killed
 * master's replica take over in a few seconds.
 */
export interface RedisSentinelSet {
  readonly master: RedisServer;
  readonly replica: RedisServer;
  readonly sentinels: RedisServer[];
  /** The master's name the sentinels monitor (REDIS_SENTINEL_NAME). */
  readonly name: string;
  /** The REDIS_SENTINELS setting: every sentinel as host:port, comma-separated. */
  readonly sentinelsSetting: string;
  /** The port the sentinels name as master now. */
  currentMasterPort(): Promise<number>;
  /** Resolves once the sentinels name a master other than `oldPort` and it answers as master. */
  waitForFailover(oldPort: number, timeoutMs?: number): Promise<number>;
  destroy(): Promise<void>;
}

export interface StartRedisSentinelOptions {
  name?: string;
  downAfterMs?: number;
}

export async function startRedisSentinelSet(options: StartRedisSentinelOptions = {}): Promise<RedisSentinelSet> {
  const name = options.name ?? 'switchboard';
  const started: RedisServer[] = [];
  try {
    const master = await startRedis();
    started.push(master);
    const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
    started.push(replica);
    await waitForReplication(replica.port);
    const config = [
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
      `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1_000}`,
      `sentinel failover-timeout ${name} 5000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n');
    const sentinels: RedisServer[] = [];
    for (let i = 0; i < 3; i += 1) {
      const sentinel = await startRedis({ sentinel: true, configFile: config });
      started.push(sentinel);
      sentinels.push(sentinel);
    }
    const set = new LocalSentinelSet({ master, replica, sentinels, name });
    await set.waitUntilSentinelsSeeEachOther();
    return set;
  } catch (error) {
    await Promise.allSettled(started.map((s) => s.destroy()));
    throw error;
  }
}

class LocalSentinelSet implements RedisSentinelSet {
  readonly master: RedisServer;
  readonly replica: RedisServer;
  readonly sentinels: RedisServer[];
  readonly name: string;
  readonly sentinelsSetting: string;

  constructor(parts: { master: RedisServer; replica: RedisServer; sentinels: RedisServer[]; name: string }) {
    ({ master: this.master, replica: this.replica, sentinels: this.sentinels, name: this.name } = parts);
    this.sentinelsSetting = this.sentinels.map((s) => `127.0.0.1:${s.port}`).join(',');
  }

  readonly currentMasterPort = async (): Promise<number> => {
    for (const sentinel of this.sentinels) {
      const answer = await askRedisNode(sentinel.port, (c) => c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.name) as Promise<[string, string] | null>).catch(() => null);
      if (answer) return Number(answer[1]);
    }
    throw new HarnessError('SERVICE_START_FAILED', 'no sentinel answers');
  };

  readonly waitForFailover = async (oldPort: number, timeoutMs = 30_000): Promise<number> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const port = await this.currentMasterPort().catch(() => oldPort);
      if (port !== oldPort) {
        const role = await askRedisNode(port, (c) => c.call('ROLE') as Promise<[string]>).catch(() => undefined);
        if (role?.[0] === 'master') return port;
      }
      await delay(100);
    }
    throw new HarnessError('SERVICE_START_FAILED', `no failover away from ${oldPort} within ${timeoutMs / 1000}s`);
  };

  /** A failover needs a quorum: every sentinel must know the other two first. */
  async waitUntilSentinelsSeeEachOther(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const counts = await Promise.all(
        this.sentinels.map((s) => askRedisNode(s.port, (c) => c.call('SENTINEL', 'SENTINELS', this.name) as Promise<unknown[]>).then((l) => l.length).catch(() => 0)),
      );
      if (counts.every((n) => n >= 2)) return;
      await delay(100);
    }
    throw new HarnessError('SERVICE_START_FAILED', `sentinels did not find each other within ${timeoutMs / 1000}s`);
  }

  readonly destroy = async (): Promise<void> => {
    await Promise.allSettled([...this.sentinels, this.replica, this.master].map((s) => s.destroy()));
  };
}

async function waitForReplication(replicaPort: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const info = await askRedisNode(replicaPort, (c) => c.info('replication')).catch(() => '');
    if (info.includes('master_link_status:up')) return;
    await delay(50);
  }
  throw new HarnessError('SERVICE_START_FAILED', `replica on ${replicaPort} did not sync within ${timeoutMs / 1000}s`);
}
