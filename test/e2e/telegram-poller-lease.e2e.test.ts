import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig, type GatewayConfig } from '@switchboard/config';
import { createDbClient, type DbClient } from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { readTelegramBotId } from '@switchboard/platforms';
import { createRedisConnection, createTurnQueue, deriveTokenId, telegramPollerLeaseKey , type RedisClient } from '@switchboard/queue';
import { createSim, type Sim } from '@switchboard/sim';
import { createIngressDeps } from '../../apps/gateway/src/ingress/accept-inbound.ts';
import { startTelegramPoller } from '../../apps/gateway/src/telegram/telegram-poller.ts';
import { postJson } from '../support/system.ts';
import { createRedisPrefix, createTestDatabase, redisUrl, type TestDatabase } from '../support/test-env.ts';

const token = '424242:poller-lease-token';
const leaseTtlMs = 900;

/**
 * The Telegram poller stops polling as soon as it loses its lease, the long
 * poll in flight included: the process that holds the lease now is the only
 * one to take updates. It polls again once it takes the lease back.
 */
describe('Telegram poller lease', () => {
  let sim: Sim;
  let simUrl: string;
  let database: TestDatabase;
  let db: DbClient;
  let redis: RedisClient;
  let pollerRedis: RedisClient;
  let config: GatewayConfig;
  let poller: { close(): Promise<void> } | undefined;

  beforeAll(async () => {
    sim = await createSim({ telegramBotToken: token, logLevel: 'silent' });
    simUrl = await sim.listen(0, '127.0.0.1');
    database = await createTestDatabase();
    config = parseConfig(gatewayEnvSchema, {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl(),
      REDIS_PREFIX: createRedisPrefix(),
      LOG_LEVEL: 'silent',
      TELEGRAM_BOT_TOKEN: token,
      TELEGRAM_API_ROOT: simUrl,
      TELEGRAM_MODE: 'polling',
    });
    db = createDbClient(config.DATABASE_URL, { max: 4 });
    redis = createRedisConnection(config.REDIS_URL, 'producer', { enableOfflineQueue: true });
    pollerRedis = createRedisConnection(config.REDIS_URL, 'subscriber');
  });
  afterAll(async () => {
    await poller?.close();
    pollerRedis?.disconnect();
    redis?.disconnect();
    await db?.close();
    await sim?.close();
    await database?.drop();
  });

  async function send(chatId: number, text: string): Promise<void> {
    await postJson(`${simUrl}/control/telegram/updates`, { chat: { id: chatId, type: 'private' }, from: { id: chatId, first_name: 'Tester' }, text });
  }

  async function stored(chatId: number): Promise<string[]> {
    const rows = await db.db.$client<{ text: string }[]>`
      select e.text from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = ${String(chatId)} order by e.id`;
    return rows.map((row) => row.text);
  }

  /** This process's poller, on its own connection; a long poll (10 s) outlasts the tests, so one left running after a loss would still answer. */
  function startPoller(): { close(): Promise<void> } {
    const log = createLogger('telegram-poller-lease-test', 'silent');
    return startTelegramPoller({
      token,
      apiRoot: simUrl,
      context: { botId: readTelegramBotId(token) },
      ingress: createIngressDeps(config, { db: db.db, queue: createTurnQueue(redis, config.REDIS_PREFIX), redis, log }),
      redis: pollerRedis,
      redisPrefix: config.REDIS_PREFIX,
      db: db.db,
      log,
      leaseTtlMs,
      pollTimeoutSeconds: 10,
    });
  }

  it('stops polling at once when another process takes the lease, and polls again once it is free', { timeout: 30_000 }, async () => {
    poller = startPoller();
    await send(951, 'while polling');
    await expect.poll(() => stored(951), { interval: 50, timeout: 10_000 }).toEqual(['while polling']);
    await expect.poll(() => sim.state.telegram.activePoll !== undefined, { interval: 20, timeout: 5_000 }).toBe(true);

    // Another gateway took the lease over (this one's had expired, say).
    const key = telegramPollerLeaseKey(config.REDIS_PREFIX, deriveTokenId(token));
    await redis.set(key, 'another-gateway', 'PX', 60_000);
    await expect.poll(() => sim.state.telegram.activePoll === undefined, { interval: 20, timeout: leaseTtlMs }).toBe(true);
    await send(951, 'for the other gateway');
    // Several renewal periods: this process does not poll again while the other holds the lease.
    await sleep(leaseTtlMs);
    expect(sim.state.telegram.activePoll).toBeUndefined();
    expect(await stored(951)).toEqual(['while polling']);

    // The other gateway is gone and its lease with it: this one takes it and reads on from the stored offset.
    await redis.del(key);
    await expect.poll(() => stored(951), { interval: 50, timeout: 10_000 }).toEqual(['while polling', 'for the other gateway']);
    await poller.close();
    poller = undefined;
  });

  // Found by issue 32's reshaping: a failure while taking over (deleteWebhook answered 500, Postgres down for
  // the stored offset) ended the leader loop, and this process never polled again until it restarted.
  it('polls after a failed takeover: deleteWebhook answered 500 once is tried again', { timeout: 30_000 }, async () => {
    await postJson(`${simUrl}/control/telegram/faults`, { method: 'deleteWebhook', kind: '500', times: 1 });
    poller = startPoller();
    await send(952, 'after the failed takeover');
    await expect.poll(() => stored(952), { interval: 50, timeout: 10_000 }).toEqual(['after the failed takeover']);
  });
});
