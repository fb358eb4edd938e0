import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSchedule, type ScheduleDeps } from '@switchboard/actions';
import { createDbClient, type DbClient } from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { createRedisConnection, createScheduleQueue, type RedisClient, type ScheduleQueue } from '@switchboard/queue';
import { discordApplicationId, waitForDiscordMessages } from '../support/discord.ts';
import { createConversation } from '../support/hooks.ts';
import { TestSystem } from '../support/system.ts';
import { createTestDatabase, redisUrl, type TestDatabase } from '../support/test-env.ts';

// Scheduled turns on Slack (a channel and a thread) and Discord (docs/schedules.md): the occurrence's
// reply goes where the conversation is, once, through the worker's outbox; Telegram is in schedules.e2e.test.ts.
describe('scheduled turns on Slack and Discord', () => {
  let database: TestDatabase;
  let system: TestSystem;
  let db: DbClient;
  let redis: RedisClient;
  let queue: ScheduleQueue;
  let door: ScheduleDeps;
  let ids: { channel: number; thread: number; discord: number };

  beforeAll(async () => {
    database = await createTestDatabase();
    ids = {
      channel: await createConversation(database.url, { platform: 'slack', accountId: 'T0SIM', chatId: 'C0SCHED', threadId: '', userScope: '' }),
      thread: await createConversation(database.url, { platform: 'slack', accountId: 'T0SIM', chatId: 'C0SCHEDT', threadId: '1700000000.000100', userScope: '' }),
      discord: await createConversation(database.url, { platform: 'discord', accountId: discordApplicationId, chatId: '1400000000000000901', threadId: '', userScope: '' }),
    };
    system = await TestSystem.start({ databaseUrl: database.url, slack: true, discord: true, workerProcesses: true });
    db = createDbClient(database.url, { max: 2 });
    redis = createRedisConnection(redisUrl(), 'worker');
    queue = createScheduleQueue(redis, system.redisPrefix);
    door = { db: db.db, schedules: queue, log: createLogger('schedules-platforms', 'silent') };
  });
  afterAll(async () => {
    await system?.close();
    await queue?.close();
    redis?.disconnect();
    await db?.close();
    await database?.drop();
  });

  async function scheduleSoon(conversationId: number, prompt: string): Promise<void> {
    const made = await makeSchedule(door, { conversationId, spec: { prompt, at: new Date(Date.now() + 1500).toISOString() }, createdBy: 'admin:test', maxActive: null });
    expect(made.kind).toBe('created');
  }

  it('answers an occurrence in a Slack channel and in a Slack thread, each once', async () => {
    await scheduleSoon(ids.channel, 'standup reminder');
    await scheduleSoon(ids.thread, 'thread reminder');
    const [inChannel] = await system.waitForSlack('C0SCHED', 1);
    expect(inChannel).toMatchObject({ text: 'echo: standup reminder' });
    expect(inChannel?.thread_ts).toBeUndefined();
    const [inThread] = await system.waitForSlack('C0SCHEDT', 1);
    expect(inThread).toMatchObject({ text: 'echo: thread reminder', thread_ts: '1700000000.000100' });
    // Nothing more arrives: one occurrence, one reply.
    await sleep(1500);
    expect(await system.waitForSlack('C0SCHED', 1)).toHaveLength(1);
    expect(await system.waitForSlack('C0SCHEDT', 1)).toHaveLength(1);
  });

  it('answers an occurrence in a Discord channel once', async () => {
    await scheduleSoon(ids.discord, 'discord reminder');
    const sent = await waitForDiscordMessages(system.simUrl, '1400000000000000901', 1);
    expect(sent.map((m) => m.content)).toEqual(['echo: discord reminder']);
    await sleep(1500);
    expect((await waitForDiscordMessages(system.simUrl, '1400000000000000901', 1)).map((m) => m.content)).toEqual(['echo: discord reminder']);
  });
});
