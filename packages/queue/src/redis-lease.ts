import { createHash, randomUUID } from 'node:crypto';
import { isCluster, type RedisClient } from './redis-connection.ts';

/**
 * One named lease in Redis with an owner token: `SET key owner NX PX ttl` to
 * take it, compare-and-pexpire to keep it, compare-and-delete to give it back.
 * Used for every "one holder cluster-wide" job: a conversation's turns, the
 * Discord gateway connection, the Telegram poller. A holder that dies stops
 * renewing and the lease is free again within one TTL.
 */
export interface RedisLease {
  readonly key: string;
  readonly owner: string;
  readonly ttlMs: number;
  tryAcquire(): Promise<boolean>;
  /** False when the lease is no longer ours (expired, and maybe taken by another process). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

/** The conversation lease (docs/turns.md): whoever holds it runs the conversation's turns. */
export function conversationLeaseKey(prefix: string, conversationId: number): string {
  return `${prefix}:lease:conversation:${conversationId}`;
}

/**
 * A bot token's id in key names (and in the rows keyed by token): never the
 * token itself, because key names show up in monitoring.
 */
export function deriveTokenId(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

/** The Discord Gateway connection lease of one bot token: whoever holds it connects. */
export function discordGatewayLeaseKey(prefix: string, tokenId: string): string {
  return `${prefix}:discord:gateway-lease:${tokenId}`;
}

/** The Telegram long-polling lease of one bot token: whoever holds it calls getUpdates. */
export function telegramPollerLeaseKey(prefix: string, tokenId: string): string {
  return `${prefix}:telegram:poller:${tokenId}`;
}

const renewScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const releaseScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * `holder` (a worker id) starts the owner token, so the leases of a holder
 * found dead can be given back at once (releaseLeasesOfHolder) instead of
 * blocking their conversations until the TTL runs out.
 */
export function createRedisLease(redis: RedisClient, key: string, ttlMs: number, holder?: string): RedisLease {
  const owner = holder === undefined ? randomUUID() : `${holder}/${randomUUID()}`;
  return {
    key,
    owner,
    ttlMs,
    async tryAcquire() {
      return (await redis.set(key, owner, 'PX', ttlMs, 'NX')) === 'OK';
    },
    async renew() {
      return (await redis.eval(renewScript, 1, key, owner, String(ttlMs))) === 1;
    },
    async release() {
      await redis.eval(releaseScript, 1, key, owner);
    },
  };
}

const releaseHolderScript = `local v = redis.call('get', KEYS[1]) if v and string.sub(v, 1, string.len(ARGV[1])) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Deletes every conversation lease whose owner token starts with
 * `<holder>/`, and returns their conversation ids. Only for a holder known to
 * be dead (its heartbeat stopped): a live holder would find its lease gone at
 * its next renewal and stop, and the commit fence keeps even that safe. SCAN
 * walks the lease keys, which are as many as the conversations running now.
 */
export async function releaseLeasesOfHolder(redis: RedisClient, prefix: string, holder: string): Promise<number[]> {
  const pattern = conversationLeaseKey(prefix, 0).replace(/0$/, '*');
  const released: number[] = [];
  // SCAN walks one server's keys: on a cluster, every master's in turn.
  const servers = isCluster(redis) ? redis.nodes('master') : [redis];
  for (const server of servers) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        if ((await redis.eval(releaseHolderScript, 1, key, `${holder}/`)) !== 1) continue;
        const id = Number(key.slice(key.lastIndexOf(':') + 1));
        if (Number.isInteger(id)) released.push(id);
      }
    } while (cursor !== '0');
  }
  return released;
}
