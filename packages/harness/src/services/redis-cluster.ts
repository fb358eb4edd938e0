import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { delay } from './child-server.ts';
import { HarnessError } from './harness-error.ts';
import { startRedis, type RedisServer } from './redis-server.ts';

/**
 * A real Redis Cluster on loopback: `masters` masters with one replica each,
 * made by `redis-cli --cluster create` as an operator would. A short node
 * timeout makes a killed master's replica take over in about two seconds.
 */
export interface RedisCluster {
  readonly nodes: RedisServer[];
  /** The REDIS_CLUSTER_NODES setting: every node as host:port, comma-separated. */
  readonly nodesSetting: string;
  /** The nodes serving slots now (CLUSTER NODES as a live node sees it). */
  masters(): Promise<RedisServer[]>;
  /** The master serving `key`'s slot now. */
  masterOf(key: string): Promise<RedisServer>;
  /** Resolves once every slot is served again (cluster_state:ok on every live node). */
  waitUntilHealthy(timeoutMs?: number): Promise<void>;
  /**
   * Moves `key`'s slot to `target` as `redis-cli --cluster reshard` does,
   * with a pause between batches of keys so that clients meet the slot half
   * moved: ASK for keys already on the target, TRYAGAIN for a script whose
   * keys are split, then MOVED once it is done.
   */
  moveSlotOf(key: string, target: RedisServer, options?: { batch?: number; pauseMs?: number }): Promise<{ movedKeys: number }>;
  /** Resolves once `killed` no longer serves slots (its replica was promoted) and the cluster is healthy. */
  waitForFailover(killed: RedisServer, timeoutMs?: number): Promise<void>;
  destroy(): Promise<void>;
}

export interface StartRedisClusterOptions {
  masters?: number;
  /** cluster-node-timeout: how long a silent master lasts before its replica is promoted. */
  nodeTimeoutMs?: number;
}

const healthyTimeoutMs = 30_000;

export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const args = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 1_000), '--cluster-replica-validity-factor', '0'];
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < masters * 2; i += 1) nodes.push(await startRedis({ args }));
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], { encoding: 'utf8', timeout: 60_000 });
    if (created.status !== 0) throw new HarnessError('SERVICE_START_FAILED', `redis-cli --cluster create failed: ${created.stdout}\n${created.stderr}`);
    const cluster = new LocalRedisCluster(nodes);
    await cluster.waitUntilHealthy();
    await cluster.waitUntilReplicasSynced();
    return cluster;
  } catch (error) {
    await Promise.allSettled(nodes.map((n) => n.destroy()));
    throw error;
  }
}

class LocalRedisCluster implements RedisCluster {
  readonly nodesSetting: string;

  constructor(readonly nodes: RedisServer[]) {
    this.nodesSetting = nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  readonly masters = async (): Promise<RedisServer[]> => {
    const table = await this.ask((c) => c.call('CLUSTER', 'NODES') as Promise<string>);
    const ports = new Set(
      table
        .split('\n')
        .map((line) => line.split(' '))
        .filter((f) => f[2]?.includes('master') === true && !f[2].includes('fail') && f.length > 8)
        .map((f) => Number(f[1]?.split(':')[1]?.split('@')[0])),
    );
    return this.nodes.filter((n) => ports.has(n.port));
  };

  readonly masterOf = async (key: string): Promise<RedisServer> => {
    const slot = await this.ask((c) => c.call('CLUSTER', 'KEYSLOT', key) as Promise<number>);
    const slots = await this.ask((c) => c.call('CLUSTER', 'SLOTS') as Promise<[number, number, [string, number]][]>);
    const range = slots.find(([from, to]) => slot >= from && slot <= to);
    const node = this.nodes.find((n) => n.port === range?.[2][1]);
    if (!node) throw new HarnessError('SERVICE_START_FAILED', `no master serves slot ${slot} of ${key}`);
    return node;
  };

  readonly waitUntilHealthy = async (timeoutMs = healthyTimeoutMs): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let last = 'not asked yet';
    while (Date.now() < deadline) {
      const states = await Promise.all(this.nodes.map((n) => askNode(n.port, (c) => c.call('CLUSTER', 'INFO') as Promise<string>).catch(() => undefined)));
      const live = states.filter((s): s is string => s !== undefined);
      last = live.map((s) => /cluster_state:(\w+)/.exec(s)?.[1] ?? '?').join(',');
      if (live.length > 0 && live.every((s) => s.includes('cluster_state:ok'))) return;
      await delay(100);
    }
    throw new HarnessError('SERVICE_START_FAILED', `redis cluster not healthy after ${timeoutMs / 1000}s (states: ${last})`);
  };

  readonly waitForFailover = async (killed: RedisServer, timeoutMs = healthyTimeoutMs): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const masters = await this.masters().catch(() => [killed]);
      if (!masters.includes(killed) && masters.length === this.nodes.length / 2) return this.waitUntilHealthy(Math.max(1_000, deadline - Date.now()));
      await delay(100);
    }
    throw new HarnessError('SERVICE_START_FAILED', `master on ${killed.port} still serves slots after ${timeoutMs / 1000}s`);
  };

  readonly moveSlotOf = async (key: string, target: RedisServer, options: { batch?: number; pauseMs?: number } = {}): Promise<{ movedKeys: number }> => {
    const slot = await this.ask((c) => c.call('CLUSTER', 'KEYSLOT', key) as Promise<number>);
    const source = await this.masterOf(key);
    if (source === target) return { movedKeys: 0 };
    const idOf = (node: RedisServer) => askNode(node.port, (c) => c.call('CLUSTER', 'MYID') as Promise<string>);
    const [sourceId, targetId] = [await idOf(source), await idOf(target)];
    await askNode(target.port, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId));
    await askNode(source.port, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId));
    let movedKeys = 0;
    for (;;) {
      const keys = await askNode(source.port, (c) => c.call('CLUSTER', 'GETKEYSINSLOT', slot, options.batch ?? 5) as Promise<string[]>);
      if (keys.length === 0) break;
      await askNode(source.port, (c) => c.call('MIGRATE', '127.0.0.1', target.port, '', 0, 5000, 'REPLACE', 'KEYS', ...keys));
      movedKeys += keys.length;
      await delay(options.pauseMs ?? 50);
    }
    // The target first, then the source, then everyone (the order redis-cli uses).
    for (const node of [target, source, ...(await this.masters()).filter((m) => m !== target && m !== source)]) {
      await askNode(node.port, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'NODE', targetId));
    }
    return { movedKeys };
  };

  /** A replica that never synced cannot take over: wait until every replica's link to its master is up. */
  async waitUntilReplicasSynced(timeoutMs = healthyTimeoutMs): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const roles = await Promise.all(this.nodes.map((n) => askNode(n.port, (c) => c.call('ROLE') as Promise<string[]>).catch(() => ['?'])));
      const replicas = roles.filter((r) => r[0] === 'slave');
      if (replicas.length === this.nodes.length / 2 && replicas.every((r) => r[3] === 'connected')) return;
      await delay(100);
    }
    throw new HarnessError('SERVICE_START_FAILED', `redis cluster replicas not in sync after ${timeoutMs / 1000}s`);
  }

  readonly destroy = async (): Promise<void> => {
    await Promise.allSettled(this.nodes.map((n) => n.destroy()));
  };

  /** Asks the first node that answers. */
  private async ask<T>(question: (client: Redis) => Promise<T>): Promise<T> {
    let lastError: unknown;
    for (const node of this.nodes) {
      try {
        return await askNode(node.port, question);
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }
}

async function askNode<T>(port: number, question: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, connectTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await question(client);
  } finally {
    client.disconnect();
  }
}

export { askNode as askRedisNode };
