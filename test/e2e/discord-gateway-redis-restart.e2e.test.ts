import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig, type GatewayConfig } from '@switchboard/config';
import { createDbClient, type DbClient } from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { createRedisConnection, createTurnQueue , type RedisClient } from '@switchboard/queue';
import { createSim, type Sim } from '@switchboard/sim';
import { startDiscordInbound, type DiscordInbound } from '../../apps/gateway/src/discord/discord-inbound.ts';
import { createIngressDeps } from '../../apps/gateway/src/ingress/accept-inbound.ts';
import { startRedis, type RedisServer } from '@switchboard/harness';
import { discordEnv, discordSimOptions, sendDiscordMessage, waitForDiscordGateway } from '../support/discord.ts';
import { createRedisPrefix, createTestDatabase, type TestDatabase } from '../support/test-env.ts';

/**
 * Chaos seed 1 (docs/guarantees.md "Found by the chaos run"): a Redis
 * restarted empty took the Discord Gateway lease and the resume session with
 * it, the next holder IDENTIFYed, and what Discord had kept for the old
 * session was lost. Two inbound instances on their own Redis, which is
 * restarted empty while messages keep coming: every message is stored once,
 * in order, and the session is never replaced by a new IDENTIFY.
 */
describe('Discord Gateway across a Redis restarted empty', () => {
  let sim: Sim;
  let simUrl: string;
  let redisServer: RedisServer;
  let database: TestDatabase;
  let db: DbClient;
  let redis: RedisClient;
  let config: GatewayConfig;
  const inbounds: DiscordInbound[] = [];

  beforeAll(async () => {
    sim = await createSim({ ...discordSimOptions, logLevel: 'silent' });
    simUrl = await sim.listen(0);
    redisServer = await startRedis();
    database = await createTestDatabase();
    config = parseConfig(gatewayEnvSchema, {
      DATABASE_URL: database.url,
      REDIS_URL: redisServer.url,
      REDIS_PREFIX: createRedisPrefix(),
      LOG_LEVEL: 'silent',
      // One user sends far more than 30 a minute here; the limit is not what this test is about.
      USER_RATE_LIMIT_PER_MINUTE: '0',
      ...discordEnv(simUrl, sim.state.discord.store.publicKeyHex),
    });
    db = createDbClient(config.DATABASE_URL, { max: 4 });
    redis = createRedisConnection(config.REDIS_URL, 'producer', { enableOfflineQueue: true });
    redis.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    for (const inbound of inbounds) await inbound.close();
    redis?.disconnect();
    await db?.close();
    await sim?.close();
    await redisServer?.destroy();
    await database?.drop();
  });

  function startProcess(): DiscordInbound {
    const log = createLogger(`redis-restart-test-${inbounds.length}`, (process.env.TEST_LOG_LEVEL ?? 'silent') as 'silent');
    const queue = createTurnQueue(redis, config.REDIS_PREFIX);
    const inbound = startDiscordInbound({ config, log, leaseTtlMs: 900, ingress: createIngressDeps(config, { db: db.db, queue, redis, log }) });
    inbounds.push(inbound);
    return inbound;
  }

  async function stored(channelId: string): Promise<string[]> {
    const rows = await db.db.$client<{ text: string }[]>`
      select e.text from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = ${channelId} order by e.id`;
    return rows.map((row) => row.text);
  }

  it('stores every message once and in order, resuming the same session throughout', { timeout: 60_000 }, async () => {
    const first = startProcess();
    await first.firstCheck;
    const connected = await waitForDiscordGateway(simUrl, { identifies: 1, connected: true });
    const second = startProcess();
    await second.firstCheck;

    const channelId = '8200000000000000001';
    const sent: string[] = [];
    let sending = true;
    const sender = (async () => {
      for (let i = 0; sending; i++) {
        const text = `line ${i}`;
        await sendDiscordMessage(simUrl, { channelId, content: text });
        sent.push(text);
        await sleep(40);
      }
    })();

    await sleep(500);
    await redisServer.stop();
    await sleep(700);
    await redisServer.start();
    // Long enough for every lease check (a third of the TTL) to find the lease gone, and a takeover to settle.
    await sleep(3000);
    sending = false;
    await sender;

    await expect.poll(() => stored(channelId), { interval: 100, timeout: 15_000 }).toEqual(sent);
    const state = sim.state.discord.gateway.state();
    expect(state.identifies).toBe(1);
    expect(state.session_id).toBe(connected.session_id);
    expect(inbounds.filter((i) => i.holdsLease)).toHaveLength(1);
  });
});
