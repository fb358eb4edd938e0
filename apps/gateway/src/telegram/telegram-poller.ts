import { setTimeout as sleep } from 'node:timers/promises';
import { Api, GrammyError } from 'grammy';
import type { RedisClient } from '@switchboard/queue';
import { loadTelegramPollOffset, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { parseTelegramUpdate, telegramUnknownChatType, type TelegramParseContext } from '@switchboard/platforms';
import { createRedisLease, deriveTokenId, runAsLeader, telegramPollerLeaseKey, type LeaseHold, type RedisLease } from '@switchboard/queue';
import { answerTelegramCommandPress, answerTelegramPress } from '../approvals/answer-press.ts';
import type { IngressDeps } from '../ingress/accept-inbound.ts';
import { ingestInbound } from '../ingress/ingest-inbound.ts';

export interface TelegramPollerOptions {
  token: string;
  apiRoot: string;
  context: TelegramParseContext;
  ingress: IngressDeps;
  /** A connection whose commands wait for a reconnect (lease renewals must not fail fast). */
  redis: RedisClient;
  redisPrefix: string;
  db: Database;
  log: Logger;
  leaseTtlMs?: number;
  pollTimeoutSeconds?: number;
}

/**
 * Long polling instead of the webhook (TELEGRAM_MODE=polling). Telegram
 * allows one getUpdates consumer per token, so a Redis lease picks one
 * gateway process to poll; the others retry and take over within a TTL.
 * The offset is persisted as the events themselves: at start the poller asks
 * for updates after the newest update_id stored in Postgres, and it only
 * moves past an update once that update is stored (or deliberately ignored).
 */
export function startTelegramPoller(options: TelegramPollerOptions): { close(): Promise<void> } {
  const log = options.log.child({ platform: 'telegram', mode: 'polling' });
  const poller: Poller = { ...options, log, api: new Api(options.token, { apiRoot: options.apiRoot.replace(/\/+$/, '') }) };
  const lease = createRedisLease(options.redis, telegramPollerLeaseKey(options.redisPrefix, deriveTokenId(options.token)), options.leaseTtlMs ?? 15_000);
  // A Redis that does not answer is a lease not taken: try again later. Errors of the polling itself still end the poller.
  const quietLease: RedisLease = { ...lease, tryAcquire: () => lease.tryAcquire().catch(() => false) };
  const stop = new AbortController();
  const running = runAsLeader({
    lease: quietLease,
    stop: stop.signal,
    lead: (hold) => pollWhileLeader(poller, hold),
    // Polling stops at once, the long poll in flight included: the new
    // holder polls now, and two consumers of one token end each other's
    // getUpdates with 409 and would both take the updates in between.
    onLost: () => log.warn('lost the Telegram poller lease; polling stops'),
    onReleaseError: () => undefined,
    // A failed takeover (deleteWebhook refused, Postgres down for the stored offset) is tried again after a
    // retry period, never the end of polling: ending the loop left this process silent until it restarted.
    onError: (err) => log.warn({ err }, 'telegram poller could not start polling; trying again'),
  }).catch((err: unknown) => log.error({ err }, 'telegram poller stopped'));
  return {
    async close() {
      stop.abort();
      await running;
    },
  };
}

type Poller = Pick<TelegramPollerOptions, 'context' | 'ingress' | 'db' | 'pollTimeoutSeconds'> & { api: Api; log: Logger };

/** Polls from the stored offset for as long as this process leads (`hold.signal` aborts on a loss or on close). */
async function pollWhileLeader(poller: Poller, hold: LeaseHold): Promise<void> {
  const { api, log } = poller;
  log.info('this process polls Telegram');
  const stop = hold.signal;
  await api.deleteWebhook();
  let offset = await loadTelegramPollOffset(poller.db, poller.context.botId);
  let failures = 0;
  while (!stop.aborted && (await hold.confirm().catch(() => false))) {
    try {
      const updates = await api.getUpdates({ offset, timeout: poller.pollTimeoutSeconds ?? 25, allowed_updates: ['message', 'callback_query'] }, stop as never);
      for (const update of updates) {
        await handleUpdate(poller, update);
        offset = update.update_id + 1;
      }
      failures = 0;
    } catch (error) {
      if (stop.aborted) return;
      failures++;
      const retryAfter = error instanceof GrammyError && error.error_code === 429 ? (error.parameters.retry_after ?? 1) * 1000 : 0;
      const wait = Math.max(retryAfter, Math.min(500 * 2 ** failures, 30_000));
      log.warn({ reason: error instanceof Error ? error.message : String(error), waitMs: wait }, 'telegram polling failed; retrying');
      await sleep(wait, undefined, { signal: stop }).catch(() => undefined);
    }
  }
}

/** Resolves once the update is stored (or deliberately ignored); throws when the poller must not move past it. */
async function handleUpdate(poller: Poller, update: unknown): Promise<void> {
  const { ingress, log } = poller;
  const ingested = await ingestInbound(ingress, () => parseTelegramUpdate(update, poller.context));
  switch (ingested.kind) {
    case 'malformed':
      return log.warn({ code: ingested.error.code, reason: ingested.error.message }, 'telegram update ignored: malformed');
    case 'skipped':
      // A button press: decided now; a failure (Postgres down) throws, so the poller does not move past it.
      if (ingested.parsed.kind === 'button') return answerTelegramPress(ingress, poller.api, ingested.parsed.press, log);
      if (ingested.parsed.reason === telegramUnknownChatType) {
        log.warn({ reason: ingested.parsed.reason }, 'telegram update ignored: unknown chat type');
        ingress.countRejected?.('telegram', ingested.parsed.reason);
      }
      return;
    case 'accepted':
      return answerTelegramCommandPress(poller.api, ingested.message, log);
    case 'not_accepted':
      // Stored but not enqueued: the recovery sweep hands it to a worker. Not stored: do not move past it.
      if (ingested.error.code === 'ENQUEUE_FAILED') return;
      throw ingested.error;
  }
}
