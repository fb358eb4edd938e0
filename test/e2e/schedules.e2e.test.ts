import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endSchedule, makeSchedule, type ScheduleDeps } from '@switchboard/actions';
import { resolveConversationKey } from '@switchboard/core';
import { createDbClient, deleteConversation, getSchedule, resumeConversation, suspendConversation, type DbClient, type ScheduleRow } from '@switchboard/db';
import { startRedis, type ManagedProcess, type RedisServer } from '@switchboard/harness';
import { createLogger } from '@switchboard/logger';
import { createRedisConnection, createScheduleQueue, type RedisClient, type ScheduleQueue } from '@switchboard/queue';
import { createConversation } from '../support/hooks.ts';
import { fastRestartEnv, liveWorkers } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { lastUserText, modelRequests, sentTo, waitForCondition, waitForIdle } from '../support/turn-helpers.ts';

/**
 * Scheduled turns through real processes (issue 34, point 2; docs/schedules.md):
 * the `schedule` tool from a chat to its one reply, and "exactly once per
 * occurrence across many workers and restarts" with worker processes killed
 * by SIGKILL around occurrences, everything down within and past
 * SCHEDULE_CATCHUP_MS, Redis restarted empty, and conversations suspended or
 * deleted under their schedules. Its own Redis, so it can be restarted
 * without persistence. The `it`s share one timeline of worker processes:
 *
 *   tool (W1 W2) → kill W1 at an occurrence, W2 alone, kill W2, both down
 *   (one-offs and a cron due), W3
 *   → kill W3, down past the window, W4 (window 2 s) → kill W4, Redis empty, W5
 *   → suspend / delete under W5 → every chat's replies counted once more.
 *
 * One-offs are made through the schedule door (makeSchedule, as the admin
 * API would); each occurrence has a chat of its own, so no two inputs ever
 * share a turn and "one reply per occurrence" is a count per chat.
 */

const chats = {
  tool: 3401,
  kill: [3411, 3412, 3413, 3414, 3415, 3416],
  missed: 3421,
  flushed: 3422,
  suspended: 3423,
  deleted: 3424,
  cronPaused: 3425,
  cronDeleted: 3426,
  cronDue: 3427,
} as const;
/** Long enough that no occurrence of the restarts is late, short of a BullMQ stalled-job takeover (up to a minute). */
const catchUp = { SCHEDULE_CATCHUP_MS: '90000' };
const accountId = '123456';

/** Sleeps until the wall clock reads `at` (ms since the epoch); at once if it is past. */
function until(at: number): Promise<void> {
  return sleep(Math.max(0, at - Date.now()));
}

describe('scheduled turns with real worker processes', () => {
  let redisServer: RedisServer;
  let system: TestSystem;
  let db: DbClient;
  let redis: RedisClient;
  let queue: ScheduleQueue;
  let deps: ScheduleDeps;
  /** What each chat must have been sent by the end, checked once everything settled. */
  const expectedReplies = new Map<number, string[]>();

  beforeAll(async () => {
    redisServer = await startRedis();
    system = await TestSystem.start({ workers: 0, redisUrl: redisServer.url, workerEnv: { ...fastRestartEnv, ...catchUp } });
    db = createDbClient(system.databaseUrl, { max: 2 });
    redis = createRedisConnection(redisServer.url, 'producer');
    queue = createScheduleQueue(redis, system.redisPrefix);
    queue.on('error', () => undefined);
    deps = { db: db.db, schedules: queue, log: createLogger('schedules-e2e', 'silent') };
    await system.addWorker(true);
    await system.addWorker(true);
  }, 60_000);
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await db?.close();
    await system?.close();
    await redisServer?.destroy();
  });

  function conversationOf(chatId: number): Promise<number> {
    return createConversation(system.databaseUrl, { platform: 'telegram', accountId, chatId: String(chatId), threadId: '', userScope: '' });
  }

  async function once(conversationId: number, prompt: string, at: number): Promise<ScheduleRow> {
    const made = await makeSchedule(deps, { conversationId, spec: { prompt, at: new Date(at).toISOString() }, createdBy: 'admin:e2e', maxActive: null });
    if (made.kind !== 'created') throw new Error(`schedule not made: ${JSON.stringify(made)}`);
    return made.schedule;
  }

  async function cron(conversationId: number, prompt: string): Promise<ScheduleRow> {
    const made = await makeSchedule(deps, { conversationId, spec: { prompt, cron: '* * * * *' }, createdBy: 'admin:e2e', maxActive: null });
    if (made.kind !== 'created') throw new Error(`schedule not made: ${JSON.stringify(made)}`);
    return made.schedule;
  }

  async function scheduleOf(id: number): Promise<ScheduleRow> {
    const row = await getSchedule(db.db, id);
    if (!row) throw new Error(`no schedule #${id}`);
    return row;
  }

  async function waitForOutcome(id: number, check: (row: ScheduleRow) => boolean, what: string, timeoutMs = 20_000): Promise<ScheduleRow> {
    let last: ScheduleRow | undefined;
    await waitForCondition(`schedule #${id}: ${what} (last ${JSON.stringify(last)})`, async () => {
      last = await getSchedule(db.db, id);
      return last !== undefined && check(last);
    }, timeoutMs);
    return last as ScheduleRow;
  }

  /** The occurrences stored for a chat: one inbound event per schedule and time, under the user `schedule:<id>`. */
  async function storedOccurrences(chatId: number): Promise<{ user_id: string; event_id: string; text: string }[]> {
    return system.sql<{ user_id: string; event_id: string; text: string }[]>`
      select e.user_id, e.event_id, e.text from inbound_events e join conversations c on c.id = e.conversation_id
      where c.chat_id = ${String(chatId)} and e.user_id like 'schedule:%' order by e.id`;
  }

  async function killWorker(worker: ManagedProcess): Promise<void> {
    await worker.stop('SIGKILL');
  }

  /**
   * Promotes a cron schedule's next delayed job (BullMQ's `job.promote()`): its
   * occurrence is due now instead of at the minute. Returns the job's id and
   * the occurrence time it stands for.
   */
  async function promoteNext(scheduleId: number): Promise<{ jobId: string; at: number }> {
    let promoted: { jobId: string; at: number } | undefined;
    await waitForCondition(`a delayed job of schedule #${scheduleId}`, async () => {
      const delayed = (await queue.getDelayed()).filter((job) => job.data.scheduleId === scheduleId);
      const job = delayed[0];
      if (delayed.length !== 1 || !job?.id) return false;
      // At a real minute boundary the job may fall due (and be taken) just before: then the next one is promoted.
      if (!(await job.promote().then(() => true, () => false))) return false;
      promoted = { jobId: job.id, at: Number(/:(\d+)$/.exec(job.id)?.[1]) };
      return true;
    }, 10_000);
    return promoted as { jobId: string; at: number };
  }

  it('the schedule tool: the user gets the confirmation, then at the time exactly one scheduled turn and one reply, and the schedule ends', async () => {
    const chatId = chats.tool;
    const prompt = `c${chatId}: time to stretch`;
    const at = new Date(Date.now() + 3000).toISOString();
    await system.setModelScript({
      rules: [
        { match: `c${chatId}: remind me`, firstStep: true, times: 1, toolCalls: [{ name: 'schedule', arguments: { prompt, at } }] },
        { match: `c${chatId}: remind me`, reply: 'OK, {{tool_result}}' },
      ],
    });
    await system.sendTelegram({ chatId, text: `c${chatId}: remind me to stretch in three seconds` });
    const [confirmation] = await system.waitForTelegram(chatId, 1);
    const booked = /^OK, scheduled: #(\d+) once at (\S+): (.*)$/.exec(confirmation?.text ?? '');
    expect(booked, confirmation?.text).not.toBeNull();
    const id = Number(booked?.[1]);
    expect(booked?.[2]).toBe(at);
    expect(booked?.[3]).toBe(prompt);
    expect((await scheduleOf(id)).status).toBe('active');

    const replies = await system.waitForTelegram(chatId, 2);
    expect(replies[1]?.text).toBe(`echo: ${prompt}`);
    const row = await waitForOutcome(id, (r) => r.status === 'ended', 'ended');
    expect(row).toMatchObject({ status: 'ended', runs: 1, missed: 0, lastOutcome: 'ran' });
    expect(row.lastOccurrenceAt?.toISOString()).toBe(at);
    const turns = (await modelRequests(system)).filter((r) => lastUserText(r) === prompt);
    expect(turns).toHaveLength(1);
    expect(await storedOccurrences(chatId)).toEqual([{ user_id: `schedule:${id}`, event_id: `schedule:${id}:${Date.parse(at)}`, text: prompt }]);
    expectedReplies.set(chatId, [confirmation?.text ?? '', `echo: ${prompt}`]);
  }, 30_000);

  it('occurrences around a SIGKILL of one of two workers, and while both are down, each run once', async () => {
    const [first, second] = liveWorkers(system);
    expect(second).toBeDefined();
    const conversations = await Promise.all(chats.kill.map((chatId) => conversationOf(chatId)));
    const base = Date.now() + 1500;
    // 0-2 around W1's kill (at base + 400), 3 on W2 alone, 4-5 due while both are down (W2 killed at base + 2000).
    const offsets = [0, 400, 800, 1600, 2400, 2800];
    const made = await Promise.all(offsets.map((offset, i) => once(conversations[i] as number, `c${chats.kill[i]}: occurrence ${i}`, base + offset)));
    await until(base + 400);
    await killWorker(first as ManagedProcess);
    await until(base + 2000);
    await killWorker(second as ManagedProcess);
    // A cron whose occurrence falls due while both are down (its job promoted: due now, not at the minute).
    const cronPrompt = `c${chats.cronDue}: every minute`;
    const cronSchedule = await cron(await conversationOf(chats.cronDue), cronPrompt);
    const due = await promoteNext(cronSchedule.id);
    await until(base + 3000);
    expect(liveWorkers(system)).toHaveLength(0);
    await system.addWorker(true);
    // The worker is up once it re-armed every schedule from Postgres: that must leave the cron's due job due,
    // not put it back to its time (nor, had its time passed meanwhile, replace it by the next: one lost).
    expect(await queue.getJobState(due.jobId)).not.toBe('delayed');

    for (const [i, chatId] of chats.kill.entries()) {
      // A job a killed worker held is taken over by BullMQ's stalled-job check (its lock lasts 30 s).
      const replies = await system.waitForTelegram(chatId, 1, 75_000);
      expect(replies.map((m) => m.text)).toEqual([`echo: c${chatId}: occurrence ${i}`]);
      expectedReplies.set(chatId, [`echo: c${chatId}: occurrence ${i}`]);
    }
    for (const schedule of made) {
      const row = await waitForOutcome(schedule.id, (r) => r.status === 'ended', 'ended');
      expect(row).toMatchObject({ runs: 1, missed: 0, lastOutcome: 'ran' });
    }
    const replies = await system.waitForTelegram(chats.cronDue, 1);
    expect(replies.map((m) => m.text)).toEqual([`echo: ${cronPrompt}`]);
    const cronRow = await waitForOutcome(cronSchedule.id, (r) => r.runs === 1, 'one run');
    expect(cronRow).toMatchObject({ status: 'active', missed: 0, lastOutcome: 'ran' });
    expect(cronRow.lastOccurrenceAt?.getTime()).toBe(due.at);
    expectedReplies.set(chats.cronDue, [`echo: ${cronPrompt}`]);
    // Its next minute must not land in a later case's count.
    expect((await endSchedule(deps, { id: cronSchedule.id })).kind).toBe('cancelled');
  }, 120_000);

  it('with every worker down, an occurrence older than SCHEDULE_CATCHUP_MS at start-up is recorded missed, and nothing is sent', async () => {
    for (const worker of liveWorkers(system)) await killWorker(worker);
    const conversationId = await conversationOf(chats.missed);
    const at = Date.now() + 1000;
    const schedule = await once(conversationId, `c${chats.missed}: too late`, at);
    await until(at + 2500);
    await system.addWorker(true, 30_000, { SCHEDULE_CATCHUP_MS: '2000' });
    const row = await waitForOutcome(schedule.id, (r) => r.lastOutcome !== null, 'an outcome');
    expect(row).toMatchObject({ status: 'ended', runs: 0, missed: 1, lastOutcome: 'missed' });
    expect(row.lastOccurrenceAt?.getTime()).toBe(at);
    expect(await storedOccurrences(chats.missed)).toEqual([]);
    expectedReplies.set(chats.missed, []);
  }, 60_000);

  it('Redis restarted without its data while a schedule is active: a worker start re-arms it from Postgres and it runs once', async () => {
    const conversationId = await conversationOf(chats.flushed);
    const prompt = `c${chats.flushed}: still remembered`;
    const schedule = await once(conversationId, prompt, Date.now() + 1500);
    expect(await queue.getJob(`once-${schedule.id}`)).toBeDefined();
    for (const worker of liveWorkers(system)) await killWorker(worker);
    await redisServer.stop();
    await redisServer.start();
    // This file's own connection (no offline queue, as the processes' producers) is back first.
    await waitForCondition('the test’s Redis connection back', async () => redis.status === 'ready', 10_000);
    expect(await queue.getJob(`once-${schedule.id}`)).toBeUndefined();
    await system.addWorker(true);
    const replies = await system.waitForTelegram(chats.flushed, 1);
    expect(replies.map((m) => m.text)).toEqual([`echo: ${prompt}`]);
    const row = await waitForOutcome(schedule.id, (r) => r.status === 'ended', 'ended');
    expect(row).toMatchObject({ runs: 1, missed: 0, lastOutcome: 'ran' });
    expectedReplies.set(chats.flushed, [`echo: ${prompt}`]);
  }, 60_000);

  it('a suspended conversation’s occurrence is paused (a cron’s next runs once it is resumed); a deleted one’s schedules are gone and run nothing', async () => {
    const [suspended, deleted, cronPaused, cronDeleted] = await Promise.all([chats.suspended, chats.deleted, chats.cronPaused, chats.cronDeleted].map((chatId) => conversationOf(chatId)));
    const at = Date.now() + 1500;
    const pausedOnce = await once(suspended as number, `c${chats.suspended}: paused`, at);
    const goneOnce = await once(deleted as number, `c${chats.deleted}: gone`, at);
    const pausedCron = await cron(cronPaused as number, `c${chats.cronPaused}: every minute`);
    const goneCron = await cron(cronDeleted as number, `c${chats.cronDeleted}: every minute`);
    for (const id of [suspended, cronPaused] as number[]) expect((await suspendConversation(db.db, id, 'operator')).kind).toBe('suspended');
    for (const [id, chatId] of [[deleted, chats.deleted], [cronDeleted, chats.cronDeleted]] as [number, number][]) {
      const key = resolveConversationKey({ platform: 'telegram', accountId, chatId: String(chatId), threadId: '', userScope: '' });
      expect((await deleteConversation(db.db, id, key)).kind).toBe('deleted');
    }
    expect(await getSchedule(db.db, goneOnce.id)).toBeUndefined();
    expect(await getSchedule(db.db, goneCron.id)).toBeUndefined();

    const row = await waitForOutcome(pausedOnce.id, (r) => r.lastOutcome !== null, 'an outcome');
    expect(row).toMatchObject({ status: 'ended', runs: 0, missed: 0, lastOutcome: 'paused' });
    await promoteNext(pausedCron.id);
    const cronRow = await waitForOutcome(pausedCron.id, (r) => r.lastOutcome !== null, 'an outcome');
    expect(cronRow).toMatchObject({ status: 'active', runs: 0, lastOutcome: 'paused' });

    // The deleted conversation's one-off fires, finds nothing and drops; its cron, promoted, does the same and is disarmed.
    await waitForCondition('the deleted conversation’s one-off handled', async () => (await queue.getJob(`once-${goneOnce.id}`))?.returnvalue !== undefined, 20_000);
    expect((await queue.getJob(`once-${goneOnce.id}`))?.returnvalue).toMatchObject({ decision: 'drop' });
    // (Unless its minute came first, which drops it the same way.)
    for (const job of (await queue.getDelayed()).filter((j) => j.data.scheduleId === goneCron.id)) await job.promote().catch(() => undefined);
    await waitForCondition('the deleted conversation’s cron disarmed', async () => (await queue.getJobScheduler(`schedule-${goneCron.id}`)) === undefined, 20_000);

    expect((await resumeConversation(db.db, cronPaused as number)).kind).toBe('resumed');
    await promoteNext(pausedCron.id);
    const prompt = `c${chats.cronPaused}: every minute`;
    const replies = await system.waitForTelegram(chats.cronPaused, 1);
    expect(replies.map((m) => m.text)).toEqual([`echo: ${prompt}`]);
    expect(await waitForOutcome(pausedCron.id, (r) => r.runs === 1, 'one run')).toMatchObject({ status: 'active', lastOutcome: 'ran' });
    expect((await endSchedule(deps, { id: pausedCron.id })).kind).toBe('cancelled');
    expectedReplies.set(chats.suspended, []);
    expectedReplies.set(chats.deleted, []);
    expectedReplies.set(chats.cronDeleted, []);
    expectedReplies.set(chats.cronPaused, [`echo: ${prompt}`]);
  }, 60_000);

  it('once everything settled, no chat got a reply twice or one it should not have', async () => {
    const live = [...expectedReplies.keys()].filter((chatId) => chatId !== chats.deleted && chatId !== chats.cronDeleted);
    await waitForIdle(system, live);
    // A late duplicate (a job run again, a turn repeated) would land within this; every count above was reached first.
    await sleep(1000);
    for (const [chatId, expected] of expectedReplies) {
      expect((await sentTo(system, chatId)).map((m) => m.text), `chat ${chatId}`).toEqual(expected);
    }
    for (const chatId of [chats.tool, ...chats.kill, chats.flushed]) expect(await storedOccurrences(chatId), `chat ${chatId}`).toHaveLength(1);
  }, 60_000);
});
