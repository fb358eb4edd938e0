import type { GatewayConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/logger';
import { createDiscordGatewayConnection, type DiscordGatewayConnection, type DiscordGatewayOptions } from '@switchboard/platforms';
import {
  createRedisConnection,
  createRedisLease,
  deriveTokenId,
  discordGatewayLeaseKey,
  redisReachOf,
  runAsLeader,
  type LeaseHold,
  type LeaseLoss,
  type RedisClient,
  type RunAsLeaderOptions,
} from '@switchboard/queue';
import type { IngressDeps } from '../ingress/accept-inbound.ts';
import { createDiscordSessionFence, type DiscordSessionFence } from './discord-session-fence.ts';
import { storeDiscordDispatch, type DiscordMessageDeps } from './store-discord-message.ts';

export interface DiscordInboundOptions {
  config: GatewayConfig;
  ingress: IngressDeps;
  log: Logger;
  /** The connection lease's TTL; a crashed holder is replaced within about this long. */
  leaseTtlMs?: number;
  /** Overrides for the gateway connection (tests shorten delays). */
  connection?: Partial<Pick<DiscordGatewayOptions, 'reconnect' | 'invalidSessionDelayMs' | 'helloTimeoutMs' | 'readyTimeoutMs'>>;
}

export interface DiscordInbound {
  readonly holdsLease: boolean;
  /** Settles after the first attempt to take the lease (and connect, if taken). */
  readonly firstCheck: Promise<void>;
  readonly connection: DiscordGatewayConnection | undefined;
  /** Closes the connection (keeping the session resumable for the next holder) and releases the lease. */
  close(): Promise<void>;
}

/** What this process's leader terms share: the connection while it leads, and how to open one. */
interface DiscordLeader {
  options: DiscordInboundOptions;
  token: string;
  log: Logger;
  leaseKey: string;
  fence: DiscordSessionFence;
  messages: DiscordMessageDeps;
  holding: boolean;
  connection: DiscordGatewayConnection | undefined;
  markFirstCheck(): void;
}

/**
 * The Discord Gateway side of ingress (verify, store once, then acknowledge). Discord allows one
 * connection per bot token to receive its events without sharding, and every
 * gateway process would otherwise open one and store every message once per
 * process. So one Redis lease per token decides which process connects
 * (`runAsLeader`); the others retry every third of the TTL and take over
 * within about one TTL when the holder dies, resuming its session so the
 * events it missed are replayed rather than lost. The session lives in
 * Postgres, fenced by a holder epoch claimed with the lease
 * (discord-session-fence.ts), because Redis may come back empty: the lease
 * can be re-taken, the session could not. Each MESSAGE_CREATE is stored once
 * (store-discord-message.ts) before the connection's resume point moves past it.
 */
export function startDiscordInbound(options: DiscordInboundOptions): DiscordInbound {
  const { config, ingress } = options;
  const token = config.DISCORD_BOT_TOKEN;
  if (!token) throw new Error('startDiscordInbound needs DISCORD_BOT_TOKEN');
  const log = options.log.child({ platform: 'discord' });
  const ttlMs = options.leaseTtlMs ?? 15_000;
  const tokenId = deriveTokenId(token);
  // Its own connection: lease commands wait for a reconnect instead of failing fast like the producer's.
  const redis: RedisClient = createRedisConnection(redisReachOf(config), 'producer', { enableOfflineQueue: true, connectionName: 'switchboard-discord-lease' });
  redis.on('error', (err) => log.debug({ err }, 'discord lease redis error'));
  const closed = new AbortController();
  let markFirstCheck: () => void = () => undefined;
  const firstCheck = new Promise<void>((resolve) => (markFirstCheck = resolve));
  const leader: DiscordLeader = {
    options,
    token,
    log,
    leaseKey: discordGatewayLeaseKey(config.REDIS_PREFIX, tokenId),
    fence: createDiscordSessionFence({ db: ingress.db, tokenId, log }),
    messages: { ingress, log, context: { botUserId: '', applicationId: config.DISCORD_APPLICATION_ID, botThreadIds: new Set() }, closing: closed.signal },
    holding: false,
    connection: undefined,
    markFirstCheck: () => markFirstCheck(),
  };
  const lease = createRedisLease(redis, leader.leaseKey, ttlMs);
  const running = runAsLeader({ ...leaderLoopOptions(leader, Math.max(100, Math.floor(ttlMs / 3))), lease, stop: closed.signal });
  return {
    firstCheck,
    get holdsLease() {
      return leader.holding;
    },
    get connection() {
      return leader.connection;
    },
    async close() {
      if (closed.signal.aborted) return;
      closed.abort();
      await running;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** How the connection lease is held: checked every third of the TTL, the session claimed with it, a vanished lease taken back. */
function leaderLoopOptions(leader: DiscordLeader, checkEveryMs: number): Omit<RunAsLeaderOptions, 'lease' | 'stop'> {
  const { log, leaseKey } = leader;
  return {
    lead: (hold) => connectWhileLeader(leader, hold),
    renewEveryMs: checkEveryMs,
    retryEveryMs: checkEveryMs,
    claim: () => leader.fence.claim(),
    // No key at all (Redis restarted empty) rather than another owner: take it back and keep the connection, so no event waits for a takeover.
    retakeVanished: true,
    onRetaken: () => log.warn({ leaseKey, holderEpoch: leader.fence.epoch }, 'discord gateway lease vanished (Redis restarted?); taken back, connection kept'),
    onLost: (loss) => reportLoss(leader, loss),
    onRenewError: (err) => log.debug({ err }, 'discord gateway lease check failed'),
    onReleaseError: (err) => log.warn({ err }, 'discord gateway lease not released; it expires by itself'),
    onNotTaken: leader.markFirstCheck,
    onError: (err) => {
      log.debug({ err }, 'discord gateway lease check failed');
      leader.markFirstCheck();
    },
  };
}

/** Connected for as long as this process leads (`hold.signal` aborts on a loss or on close). */
async function connectWhileLeader(leader: DiscordLeader, hold: LeaseHold): Promise<void> {
  leader.holding = true;
  leader.log.info({ leaseKey: leader.leaseKey, holderEpoch: leader.fence.epoch }, 'discord gateway lease taken; connecting');
  leader.connection = openConnection(leader);
  leader.markFirstCheck();
  try {
    await waitForAbort(hold.signal);
  } finally {
    const current = leader.connection;
    leader.connection = undefined;
    await current?.close();
    leader.holding = false;
  }
}

function openConnection(leader: DiscordLeader): DiscordGatewayConnection {
  const { options, log, messages } = leader;
  const { config } = options;
  const connection = createDiscordGatewayConnection({
    token: leader.token,
    apiUrl: config.DISCORD_API_URL,
    gatewayUrl: config.DISCORD_GATEWAY_URL,
    log,
    sessionStore: leader.fence.store,
    ...options.connection,
    onReady(ready) {
      messages.context.botUserId = ready.userId;
      messages.context.applicationId = config.DISCORD_APPLICATION_ID ?? ready.applicationId;
      if (config.DISCORD_APPLICATION_ID && ready.applicationId && ready.applicationId !== config.DISCORD_APPLICATION_ID) {
        log.warn({ configured: config.DISCORD_APPLICATION_ID, actual: ready.applicationId }, 'DISCORD_APPLICATION_ID differs from the application this token belongs to');
      }
    },
    onDispatch: (event) => storeDiscordDispatch(messages, event),
  });
  connection.start();
  return connection;
}

function reportLoss(leader: DiscordLeader, loss: LeaseLoss): void {
  leader.holding = false;
  if (loss === 'refused') leader.log.warn({ leaseKey: leader.leaseKey }, 'discord gateway lease lost; disconnecting so that only one process receives events');
  else leader.log.warn({ leaseKey: leader.leaseKey }, 'discord gateway lease not confirmed for a whole TTL; disconnecting');
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
