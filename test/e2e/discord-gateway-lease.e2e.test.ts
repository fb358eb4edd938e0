import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig, type GatewayConfig } from '@switchboard/config';
import { createDbClient, type DbClient } from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { createRedisConnection, createTurnQueue, deriveTokenId, discordGatewayLeaseKey , type RedisClient } from '@switchboard/queue';
import { createSim, type Sim } from '@switchboard/sim';
import { startDiscordInbound, type DiscordInbound } from '../../apps/gateway/src/discord/discord-inbound.ts';
import { createIngressDeps } from '../../apps/gateway/src/ingress/accept-inbound.ts';
import { discordEnv, discordSimOptions, sendDiscordMessage, waitForDiscordGateway } from '../support/discord.ts';
import { createRedisPrefix, createTestDatabase, redisUrl, type TestDatabase } from '../support/test-env.ts';

/**
 * Two gateway processes' Discord inbound against one bot token: only the
 * lease holder connects, and when it goes away the other takes over by
 * resuming the same session, so nothing sent in between is lost.
 */
describe('Discord Gateway lease across gateway processes', () => {
  let sim: Sim;
  let simUrl: string;
  let database: TestDatabase;
  let db: DbClient;
  let redis: RedisClient;
  let config: GatewayConfig;
  const inbounds: DiscordInbound[] = [];

  beforeAll(async () => {
    sim = await createSim({ ...discordSimOptions, logLevel: 'silent' });
    simUrl = await sim.listen(0);
    database = await createTestDatabase();
    config = parseConfig(gatewayEnvSchema, {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl(),
      REDIS_PREFIX: createRedisPrefix(),
      LOG_LEVEL: 'silent',
      ...discordEnv(simUrl, sim.state.discord.store.publicKeyHex),
    });
    db = createDbClient(config.DATABASE_URL, { max: 4 });
    redis = createRedisConnection(config.REDIS_URL, 'producer', { enableOfflineQueue: true });
  });
  afterAll(async () => {
    for (const inbound of inbounds) await inbound.close();
    redis?.disconnect();
    await db?.close();
    await sim?.close();
    await database?.drop();
  });

  function startProcess(): DiscordInbound {
    const log = createLogger('lease-test', 'silent');
    const queue = createTurnQueue(redis, config.REDIS_PREFIX);
    const inbound = startDiscordInbound({
      config,
      log,
      leaseTtlMs: 900,
      ingress: createIngressDeps(config, { db: db.db, queue, redis, log }),
    });
    inbounds.push(inbound);
    return inbound;
  }

  async function stored(channelId: string): Promise<string[]> {
    const rows = await db.db.$client<{ text: string }[]>`
      select e.text from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = ${channelId} order by e.id`;
    return rows.map((row) => row.text);
  }

  it('connects from one process only, and the other takes over by resuming when it leaves', async () => {
    const first = startProcess();
    await first.firstCheck;
    expect(first.holdsLease).toBe(true);
    const connected = await waitForDiscordGateway(simUrl, { identifies: 1, connected: true });

    const second = startProcess();
    await second.firstCheck;
    expect(second.holdsLease).toBe(false);
    expect(second.connection).toBeUndefined();
    expect(sim.state.discord.gateway.state().connections).toBe(connected.connections);

    await sendDiscordMessage(simUrl, { channelId: '8100000000000000001', content: 'to the first' });
    await first.close();
    // Sent while nobody is connected: the session keeps it for the resume.
    const between = await sendDiscordMessage(simUrl, { channelId: '8100000000000000001', content: 'while handing over' });
    expect(between.delivered).toBe(false);

    const after = await waitForDiscordGateway(simUrl, { resumes: connected.resumes + 1, connected: true });
    expect(after.identifies).toBe(1);
    expect(after.session_id).toBe(connected.session_id);
    expect(second.holdsLease).toBe(true);
    await sendDiscordMessage(simUrl, { channelId: '8100000000000000001', content: 'to the second' });
    await expect.poll(() => stored('8100000000000000001'), { interval: 50, timeout: 10_000 }).toEqual(['to the first', 'while handing over', 'to the second']);
  });

  it('disconnects when another process takes the lease, and resumes once it takes it back', async () => {
    const holder = inbounds.find((inbound) => inbound.holdsLease);
    if (!holder) throw new Error('no process holds the lease');
    const before = await waitForDiscordGateway(simUrl, { connected: true });
    const key = discordGatewayLeaseKey(config.REDIS_PREFIX, deriveTokenId(config.DISCORD_BOT_TOKEN as string));
    await redis.set(key, 'another-gateway', 'PX', 60_000);
    await expect.poll(() => holder.holdsLease, { interval: 20, timeout: 5_000 }).toBe(false);
    await waitForDiscordGateway(simUrl, { connected: false });
    expect(holder.connection).toBeUndefined();

    await redis.del(key);
    const after = await waitForDiscordGateway(simUrl, { resumes: before.resumes + 1, connected: true });
    expect(after.identifies).toBe(before.identifies);
    expect(holder.holdsLease).toBe(true);
  });
});
