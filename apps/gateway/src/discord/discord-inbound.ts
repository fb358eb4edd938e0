import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '@switchboard/queue';
import type { GatewayConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/logger';
import {
  createDiscordGatewayConnection,
  discordThreadChannelTypes,
  parseDiscordMessage,
  type DiscordDispatch,
  type DiscordGatewayConnection,
  type DiscordGatewayOptions,
  type DiscordParseContext,
  type DiscordSessionStore,
} from '@switchboard/platforms';
import { claimDiscordSessionHold, loadDiscordSession, saveDiscordSession } from '@switchboard/db';
import { createRedisConnection, redisReachOf, createRedisLease, deriveTokenId, discordGatewayLeaseKey, runWhileLeased, type LeaseHold, type LeaseLoss } from '@switchboard/queue';
import { IngressError, type IngressDeps } from '../ingress/accept-inbound.ts';
import { acceptParsed, parseInbound } from '../ingress/ingest-inbound.ts';

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

/** Threads the bot was brought into, kept so later messages there need no mention; bounded, oldest forgotten first. */
const maxRememberedThreads = 10_000;
/** A brief store failure is retried in place before the connection is made to resume (which replays the event). */
const storeRetryDelaysMs = [250, 1000];
/** Sessions outlive a connection by a few minutes on Discord; an older stored one would only earn an op 9. */
const sessionTtlMs = 10 * 60_000;

/**
 * The Discord Gateway side of ingress (verify, store once, then acknowledge). Discord allows one
 * connection per bot token to receive its events without sharding, and every
 * gateway process would otherwise open one and store every message once per
 * process. So one Redis lease per token decides which process connects; the
 * others retry every third of the TTL and take over within about one TTL
 * when the holder dies, resuming its session from Redis so the events it
 * missed are replayed rather than lost. The session (id, resume URL, last
 * stored sequence) lives in Postgres, fenced by a holder epoch claimed with
 * the lease, because Redis may come back empty: the lease can be re-taken,
 * the session could not. Each MESSAGE_CREATE is stored once
 * (deduped on the message id, so replays after a resume are harmless) before
 * the connection's resume point moves past it.
 */
export function startDiscordInbound(options: DiscordInboundOptions): DiscordInbound {
  const { config, ingress } = options;
  const token = config.DISCORD_BOT_TOKEN;
  if (!token) throw new Error('startDiscordInbound needs DISCORD_BOT_TOKEN');
  const log = options.log.child({ platform: 'discord' });
  const ttlMs = options.leaseTtlMs ?? 15_000;
  const tokenId = deriveTokenId(token);
  const leaseKey = discordGatewayLeaseKey(config.REDIS_PREFIX, tokenId);
  const checkEveryMs = Math.max(100, Math.floor(ttlMs / 3));

  // Its own connection: lease commands wait for a reconnect instead of failing fast like the producer's.
  const redis: RedisClient = createRedisConnection(redisReachOf(config), 'producer', { enableOfflineQueue: true, connectionName: 'switchboard-discord-lease' });
  redis.on('error', (err) => log.debug({ err }, 'discord lease redis error'));
  const lease = createRedisLease(redis, leaseKey, ttlMs);

  const threads = new Set<string>();
  const context: DiscordParseContext = { botUserId: '', applicationId: config.DISCORD_APPLICATION_ID, botThreadIds: threads };
  /** This process's fencing token for session writes, claimed each time it takes the lease. */
  let holderEpoch = 0;
  const sessionStore: DiscordSessionStore = {
    load: () => loadDiscordSession(ingress.db, tokenId, sessionTtlMs),
    async save(session) {
      const written = await saveDiscordSession(ingress.db, tokenId, holderEpoch, session);
      // Another process has claimed the connection since; the next lease check disconnects this one.
      if (!written) log.debug({ holderEpoch }, 'discord gateway session not saved: another process has claimed the connection since');
    },
  };

  let holding = false;
  let connection: DiscordGatewayConnection | undefined;
  const closed = new AbortController();
  let markFirstCheck: () => void = () => undefined;
  const firstCheck = new Promise<void>((resolve) => (markFirstCheck = resolve));

  async function handleDispatch(event: DiscordDispatch): Promise<void> {
    if (event.t !== 'MESSAGE_CREATE') return;
    const parsed = parseInbound(() => parseDiscordMessage(event.d, context));
    if (parsed.kind === 'malformed') {
      log.warn({ code: parsed.error.code, reason: parsed.error.message, s: event.s }, 'discord message ignored: malformed');
      return;
    }
    if (parsed.kind === 'skipped') {
      log.debug({ reason: parsed.parsed.kind === 'ignored' ? parsed.parsed.reason : parsed.parsed.kind, s: event.s }, 'discord message ignored');
      return;
    }
    const channelType = (event.d as { channel_type?: unknown }).channel_type;
    if (typeof channelType === 'number' && discordThreadChannelTypes.has(channelType)) rememberThread(parsed.message.address.chatId);
    for (let attempt = 0; ; attempt++) {
      let failure: unknown;
      try {
        const accepted = await acceptParsed(ingress, parsed.message);
        if (accepted.kind === 'accepted') return;
        if (accepted.error.code === 'ENQUEUE_FAILED') {
          // Stored: the recovery sweep hands it to a worker once Redis is back.
          log.warn({ err: accepted.error.cause, eventId: parsed.message.eventId }, 'discord message stored but not enqueued; the sweep will pick it up');
          return;
        }
        failure = accepted.error;
      } catch (error) {
        failure = error;
      }
      const delay = storeRetryDelaysMs[attempt];
      if (delay === undefined || closed.signal.aborted) throw failure;
      log.warn({ err: failure instanceof IngressError ? failure.cause : failure, eventId: parsed.message.eventId, attempt }, 'discord message not stored; retrying');
      await sleep(delay);
    }
  }

  function rememberThread(channelId: string): void {
    threads.delete(channelId);
    threads.add(channelId);
    if (threads.size > maxRememberedThreads) threads.delete(threads.values().next().value as string);
  }

  function connect(): void {
    connection = createDiscordGatewayConnection({
      token: token as string,
      apiUrl: config.DISCORD_API_URL,
      gatewayUrl: config.DISCORD_GATEWAY_URL,
      log,
      sessionStore,
      ...options.connection,
      onReady(ready) {
        context.botUserId = ready.userId;
        context.applicationId = config.DISCORD_APPLICATION_ID ?? ready.applicationId;
        if (config.DISCORD_APPLICATION_ID && ready.applicationId && ready.applicationId !== config.DISCORD_APPLICATION_ID) {
          log.warn({ configured: config.DISCORD_APPLICATION_ID, actual: ready.applicationId }, 'DISCORD_APPLICATION_ID differs from the application this token belongs to');
        }
      },
      onDispatch: handleDispatch,
    });
    connection.start();
  }

  async function disconnect(): Promise<void> {
    const current = connection;
    connection = undefined;
    await current?.close();
  }

  /** The session epoch, claimed with the lease (and again when a vanished lease is taken back); false gives the lease back for a later try. */
  async function claimSession(): Promise<boolean> {
    try {
      holderEpoch = await claimDiscordSessionHold(ingress.db, tokenId);
      return true;
    } catch (err) {
      log.warn({ err }, 'discord gateway lease taken but the session could not be claimed in Postgres; trying again later');
      return false;
    }
  }

  /** Connected for as long as the lease is held and the process is not closing. */
  async function connectWhileHolding(hold: LeaseHold): Promise<void> {
    holding = true;
    log.info({ leaseKey, holderEpoch }, 'discord gateway lease taken; connecting');
    connect();
    markFirstCheck();
    try {
      await waitForAbort(AbortSignal.any([hold.signal, closed.signal]));
    } finally {
      await disconnect();
      holding = false;
    }
  }

  function reportLoss(loss: LeaseLoss): void {
    holding = false;
    if (loss === 'refused') log.warn({ leaseKey }, 'discord gateway lease lost; disconnecting so that only one process receives events');
    else log.warn({ leaseKey }, 'discord gateway lease not confirmed for a whole TTL; disconnecting');
  }

  /** Takes the lease whenever it is free (every third of the TTL), and connects while holding it. */
  async function holdConnection(): Promise<void> {
    while (!closed.signal.aborted) {
      try {
        await runWhileLeased(lease, connectWhileHolding, {
          renewEveryMs: checkEveryMs,
          claim: claimSession,
          // No key at all (Redis restarted empty) rather than another owner: take it back and keep the connection, so no event waits for a takeover.
          retakeVanished: true,
          onRetaken: () => log.warn({ leaseKey, holderEpoch }, 'discord gateway lease vanished (Redis restarted?); taken back, connection kept'),
          onLost: reportLoss,
          onRenewError: (err) => log.debug({ err }, 'discord gateway lease check failed'),
          onReleaseError: (err) => log.warn({ err }, 'discord gateway lease not released; it expires by itself'),
        });
      } catch (err) {
        log.debug({ err }, 'discord gateway lease check failed');
      }
      markFirstCheck();
      await sleep(checkEveryMs, undefined, { signal: closed.signal }).catch(() => undefined);
    }
  }
  const running = holdConnection();

  return {
    firstCheck,
    get holdsLease() {
      return holding;
    },
    get connection() {
      return connection;
    },
    async close() {
      if (closed.signal.aborted) return;
      closed.abort();
      await running;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
