import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endSchedule, makeSchedule, type ScheduleDeps } from '@switchboard/actions';
import { getSchedule, storeInboundEvent } from '@switchboard/db';
import { useTestDbClient } from '@switchboard/db/testing';
import { createLogger } from '@switchboard/logger';
import { createRedisConnection, createScheduleQueue, createTurnQueue, type RedisClient, type ScheduleQueue, type TurnQueue } from '@switchboard/queue';
import { createRedisPrefix, redisUrl } from '@switchboard/harness/test-env';
import { runOccurrence, type OccurrenceDeps } from './run-occurrence.ts';
import { createScheduleTool, createToolRegistry } from '@switchboard/agent';
import { createScheduleBook } from './schedule-book.ts';
import { createScheduleWorker, rearmSchedules } from './schedule-worker.ts';

// Scheduled turns (docs/schedules.md) against the real Postgres and Redis: one occurrence is one stored input, whoever runs it how often.
const db = useTestDbClient({ max: 4 });
const prefix = createRedisPrefix();
const log = createLogger('schedules-test', 'silent');
let redis: RedisClient;
let turns: TurnQueue;
let queue: ScheduleQueue;
let deps: OccurrenceDeps;
let door: ScheduleDeps;

beforeAll(() => {
  redis = createRedisConnection(redisUrl(), 'worker');
  turns = createTurnQueue(redis, prefix);
  queue = createScheduleQueue(redis, prefix);
  deps = { db: db.client.db, queue: turns, schedules: queue, redis, redisPrefix: prefix, catchUpMs: 60_000, maxQueuedInput: 32, log };
  door = { db: db.client.db, schedules: queue, log };
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await turns.obliterate({ force: true });
  await queue.close();
  await turns.close();
  redis.disconnect();
});

let chats = 0;
async function newConversation(): Promise<number> {
  const chat = String(9000 + ++chats);
  const stored = await storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: 'bot', eventId: `hello-${chat}`, conversationKey: `telegram:bot:${chat}::`, chatId: chat, threadId: '', userScope: '',
    userId: '42', text: 'hello', command: 'text', replyTarget: { chatId: Number(chat) }, refuseAtPending: null,
  });
  return stored.conversationId;
}

async function scheduledInputs(conversationId: number) {
  return db.client.db.$client<{ event_id: string; user_id: string; text: string; status: string }[]>`
    select event_id, user_id, text, status from inbound_events where conversation_id = ${conversationId} and event_id like 'schedule:%' order by id`;
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await sleep(50);
  }
}

describe('schedule occurrences', () => {
  it('runs a one-off once at its time as the conversation\'s input from schedule:<id>, and ends it', async () => {
    const conversationId = await newConversation();
    const at = new Date(Date.now() + 400);
    const made = await makeSchedule(door, { conversationId, spec: { prompt: 'Time to stretch.', at: at.toISOString() }, createdBy: 'telegram:bot:42', maxActive: 5 });
    expect(made.kind).toBe('created');
    if (made.kind !== 'created') return;
    expect(await queue.getJob(`once-${made.schedule.id}`)).toBeDefined();
    const worker = createScheduleWorker(deps, redis);
    try {
      const inputs = await waitFor(() => scheduledInputs(conversationId), (rows) => rows.length > 0);
      expect(inputs).toEqual([{ event_id: `schedule:${made.schedule.id}:${at.getTime()}`, user_id: `schedule:${made.schedule.id}`, text: 'Time to stretch.', status: 'pending' }]);
      const row = await waitFor(() => getSchedule(db.client.db, made.schedule.id), (s) => s?.status === 'ended');
      // Run again once it ended (a job run twice): nothing more.
      expect((await runOccurrence(deps, { scheduleId: made.schedule.id, occurrenceAt: at })).decision).toBe('drop');
      expect(await scheduledInputs(conversationId)).toHaveLength(1);
      expect(row).toMatchObject({ status: 'ended', runs: 1, missed: 0, lastOutcome: 'ran' });
      expect(await turns.getJob(`ev-${(await db.client.db.$client<{ id: string }[]>`select id from inbound_events where event_id like ${`schedule:${made.schedule.id}:%`}`)[0]?.id}`)).toBeDefined();
    } finally {
      await worker.close();
    }
  });

  it('arms a cron as one BullMQ job scheduler whose next job is its next time, the same after re-arming; its occurrence carries that time', async () => {
    const conversationId = await newConversation();
    const made = await makeSchedule(door, { conversationId, spec: { prompt: 'Daily digest', cron: '0 9 * * *', timeZone: 'Europe/Paris' }, createdBy: 'admin:ops', maxActive: null });
    if (made.kind !== 'created') throw new Error(made.kind);
    const next = new Date();
    next.setUTCHours(8, 0, 0, 0);
    if (next.getTime() <= Date.now()) next.setUTCDate(next.getUTCDate() + 1);
    const delayedIds = async () => (await queue.getDelayed()).map((job) => job.id).filter((id) => id?.includes(`schedule-${made.schedule.id}:`));
    expect(await delayedIds()).toEqual([`repeat:schedule-${made.schedule.id}:${next.getTime()}`]);
    await rearmSchedules(door);
    await rearmSchedules(door);
    expect(await delayedIds()).toEqual([`repeat:schedule-${made.schedule.id}:${next.getTime()}`]);
    // Its time comes now: the job scheduler's job, promoted, is handled as the occurrence at that time.
    const job = await queue.getJob(`repeat:schedule-${made.schedule.id}:${next.getTime()}`);
    const worker = createScheduleWorker({ ...deps, catchUpMs: 2 * 24 * 3600 * 1000 }, redis);
    try {
      await job?.promote();
      const inputs = await waitFor(() => scheduledInputs(conversationId), (rows) => rows.length > 0);
      expect(inputs.map((r) => r.event_id)).toEqual([`schedule:${made.schedule.id}:${next.getTime()}`]);
      // The same occurrence again (a retried job, a second worker): a duplicate, no second input, counted once.
      const again = await runOccurrence({ ...deps, catchUpMs: 2 * 24 * 3600 * 1000 }, { scheduleId: made.schedule.id, occurrenceAt: next });
      expect(again).toMatchObject({ decision: 'run', stored: 'duplicate' });
      expect(await scheduledInputs(conversationId)).toHaveLength(1);
      expect(await waitFor(() => getSchedule(db.client.db, made.schedule.id), (s) => s?.runs === 1)).toMatchObject({ runs: 1, lastOutcome: 'ran' });
      expect((await getSchedule(db.client.db, made.schedule.id))?.status).toBe('active');
    } finally {
      await worker.close();
      await endSchedule(door, { id: made.schedule.id });
    }
    expect(await queue.getJobScheduler(`schedule-${made.schedule.id}`)).toBeUndefined();
  });

  it('records a late occurrence as missed, one in a suspended conversation as paused, and runs nothing for either', async () => {
    const conversationId = await newConversation();
    const made = await makeSchedule(door, { conversationId, spec: { prompt: 'late', cron: '*/5 * * * *' }, createdBy: 'admin:ops', maxActive: null });
    if (made.kind !== 'created') throw new Error(made.kind);
    const late = await runOccurrence(deps, { scheduleId: made.schedule.id, occurrenceAt: new Date(Date.now() - 120_000) });
    expect(late.decision).toBe('missed');
    expect(await getSchedule(db.client.db, made.schedule.id)).toMatchObject({ status: 'active', missed: 1, runs: 0, lastOutcome: 'missed' });
    await db.client.db.$client`update conversations set status = 'suspended' where id = ${conversationId}`;
    const paused = await runOccurrence(deps, { scheduleId: made.schedule.id, occurrenceAt: new Date() });
    expect(paused.decision).toBe('paused');
    expect(await getSchedule(db.client.db, made.schedule.id)).toMatchObject({ status: 'active', lastOutcome: 'paused', runs: 0 });
    expect(await scheduledInputs(conversationId)).toEqual([]);
    await endSchedule(door, { id: made.schedule.id });
  });

  it('drops the occurrence of a cancelled schedule and of a deleted conversation, and disarms it', async () => {
    const conversationId = await newConversation();
    const made = await makeSchedule(door, { conversationId, spec: { prompt: 'gone', cron: '0 * * * *' }, createdBy: 'admin:ops', maxActive: null });
    if (made.kind !== 'created') throw new Error(made.kind);
    await db.client.db.$client`delete from conversations where id = ${conversationId}`;
    expect(await getSchedule(db.client.db, made.schedule.id)).toBeUndefined();
    const dropped = await runOccurrence(deps, { scheduleId: made.schedule.id, occurrenceAt: new Date() });
    expect(dropped.decision).toBe('drop');
    expect(await queue.getJobScheduler(`schedule-${made.schedule.id}`)).toBeUndefined();
  });

  it('holds a user to USER_MAX_SCHEDULES when creates race, and gives a re-run turn the schedule it made', async () => {
    const conversationId = await newConversation();
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => makeSchedule(door, { conversationId, spec: { prompt: `r${i}`, at }, createdBy: 'telegram:bot:77', maxActive: 3 })),
    );
    expect(results.filter((r) => r.kind === 'created')).toHaveLength(3);
    expect(results.filter((r) => r.kind === 'over_limit')).toHaveLength(3);
    const request = { conversationId, spec: { prompt: 'once', at }, createdBy: 'telegram:bot:78', maxActive: 3, originKey: `${conversationId}:1:abc` };
    const first = await makeSchedule(door, request);
    const second = await makeSchedule(door, request);
    expect(first.kind).toBe('created');
    expect(second.kind).toBe('existing');
    expect(first.kind !== 'invalid' && 'schedule' in first && 'schedule' in second ? second.schedule.id === first.schedule.id : false).toBe(true);
    const bad = await makeSchedule(door, { conversationId, spec: { prompt: 'x', cron: '* * * * * *' }, createdBy: 'telegram:bot:78', maxActive: 3 });
    expect(bad).toMatchObject({ kind: 'invalid', code: 'SCHEDULE_INVALID' });
  });

  it('the schedule tool acts only in its own conversation, for its own user, and never for a scheduled or triggered turn', async () => {
    const mine = await newConversation();
    const theirs = await newConversation();
    const registry = createToolRegistry([createScheduleTool(createScheduleBook(door, 2))]);
    const signal = new AbortController().signal;
    const call = (caller: { conversationId: number; userKey: string; userId: string; turnKey: string }, args: object) => registry.call('schedule', JSON.stringify(args), { signal, caller });
    const alice = { conversationId: mine, userKey: 'telegram:bot:501', userId: '501', turnKey: `${mine}:1` };
    const at = new Date(Date.now() + 3_600_000).toISOString();
    expect(await call(alice, { prompt: 'water the plants', at })).toMatch(/^scheduled: #\d+ once at /);
    // The same call again in the same turn (a re-run after a crash): the schedule it made, not a second one.
    expect(await call(alice, { prompt: 'water the plants', at })).toMatch(/^already scheduled: #\d+/);
    expect(await call({ ...alice, turnKey: `${mine}:2` }, { prompt: 'feed the cat', cron: '0 8 * * *', timeZone: 'Europe/Paris' })).toMatch(/^scheduled: #\d+ every "0 8 \* \* \*" in Europe\/Paris/);
    expect(await call({ ...alice, turnKey: `${mine}:3` }, { prompt: 'one too many', at })).toMatch(/^error: SCHEDULE_LIMIT/);
    expect(await call({ ...alice, turnKey: `${mine}:4` }, { prompt: 'bad', cron: '*/10 * * * * *' })).toMatch(/^error: SCHEDULE_INVALID: cron must have five fields/);
    const listed = await call(alice, { action: 'list' });
    expect(listed.split('\n')).toHaveLength(2);
    const [id] = /#(\d+)/.exec(listed)?.slice(1) ?? [];
    // Another conversation's turn can neither see nor cancel it.
    const bob = { conversationId: theirs, userKey: 'telegram:bot:502', userId: '502', turnKey: `${theirs}:1` };
    expect(await call(bob, { action: 'list' })).toBe('no schedules in this conversation');
    expect(await call(bob, { action: 'cancel', id: Number(id) })).toBe(`error: no active schedule #${id} in this conversation`);
    // A scheduled occurrence's turn (and a hook's) may not make schedules.
    expect(await call({ ...alice, userKey: 'telegram:bot:schedule:1', userId: 'schedule:1', turnKey: `${mine}:9` }, { prompt: 'again', at })).toBe('error: a scheduled or triggered turn cannot create schedules');
    expect(await call({ ...alice, userKey: 'telegram:bot:hook:ci', userId: 'hook:ci', turnKey: `${mine}:9` }, { prompt: 'again', at })).toBe('error: a scheduled or triggered turn cannot create schedules');
    expect(await call(alice, { action: 'cancel', id: Number(id) })).toBe(`schedule #${id} cancelled`);
    expect((await call(alice, { action: 'list' })).split('\n')).toHaveLength(1);
    expect(await registry.call('schedule', JSON.stringify({ action: 'list' }), { signal })).toBe('error: schedules are not available in this turn');
  });
});
