import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig } from '@switchboard/config';
import { storeInboundEvent } from '@switchboard/db';
import { useTestDbClient } from '@switchboard/db/testing';
import { startRedis, type RedisServer } from '@switchboard/harness';
import { createRedisPrefix, redisUrl } from '@switchboard/harness/test-env';
import { createLogger } from '@switchboard/logger';
import { createRedisConnection, createScheduleQueue, createTurnQueue, type RedisClient, type ScheduleQueue, type TurnQueue } from '@switchboard/queue';
import { buildGatewayApp } from '../../app.ts';

// Issue 34, point 2: operators' schedules through the admin API (POST, GET,
// DELETE /admin/schedules). On the gateway's own app through inject, with
// real Postgres and Redis; what BullMQ holds is read from the `schedules`
// queue itself, as a worker would find it.

const token = 'alice-0123456789abcdef';
const db = useTestDbClient();
const auth = { authorization: `Bearer ${token}` };
const hour = 3600_000;

interface Schedule {
  id: number;
  conversationId: number;
  prompt: string;
  runAt: string | null;
  cron: string | null;
  timeZone: string;
  status: string;
  createdBy: string;
  createdAt: string;
  endedAt: string | null;
}
interface AuditRow {
  action: string;
  actor: string;
  target: string;
  result: string;
  detail: Record<string, unknown>;
}

describe('/admin/schedules', () => {
  let redis: Redis;
  let queue: TurnQueue;
  let schedules: ScheduleQueue;
  let app: FastifyInstance;

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    queue = createTurnQueue(redis, createRedisPrefix());
    schedules = createScheduleQueue(redis, createRedisPrefix());
    const config = parseConfig(gatewayEnvSchema, { DATABASE_URL: db.url, REDIS_URL: redisUrl(), REDIS_PREFIX: createRedisPrefix(), LOG_LEVEL: 'silent', ADMIN_TOKEN: `alice:${token}` });
    app = await buildGatewayApp({ config, db: db.client.db, queue, schedules, redis, log: createLogger('schedule-routes-test', 'silent') });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await schedules?.close();
    await queue?.close();
    redis?.disconnect();
  });

  const newConversation = (chatId: string) => createConversation(db.client.db, chatId);
  const post = (payload: unknown, headers: Record<string, string> = auth) => app.inject({ method: 'POST', url: '/admin/schedules', headers, payload: payload as object });
  const list = async (query = '') => (await app.inject({ method: 'GET', url: `/admin/schedules${query}`, headers: auth })).json<{ items: Schedule[] }>().items;
  const remove = (id: number | string, headers: Record<string, string> = auth) => app.inject({ method: 'DELETE', url: `/admin/schedules/${id}`, headers });
  const audit = async (target: string) => (await app.inject({ method: 'GET', url: `/admin/audit?target=${target}`, headers: auth })).json<{ items: AuditRow[] }>().items;
  const armedJobs = async () => (await schedules.getJobCounts('delayed', 'waiting', 'prioritized')) as Record<string, number>;

  it('creates a one-off: 201 with the schedule, a delayed job once-<id> in BullMQ, audited; DELETE cancels it and takes the job out', async () => {
    const conversationId = await newConversation('4101');
    const at = new Date(Date.now() + 2 * hour);
    const created = await post({ conversationId, prompt: '  Remind me to water the plants  ', at: at.toISOString() });
    expect(created.statusCode).toBe(201);
    const { schedule } = created.json<{ ok: true; schedule: Schedule }>();
    expect(schedule).toMatchObject({ conversationId, prompt: 'Remind me to water the plants', runAt: at.toISOString(), cron: null, timeZone: 'UTC', status: 'active', createdBy: 'admin:alice', endedAt: null });
    expect(new Date(schedule.createdAt).toISOString()).toBe(schedule.createdAt);

    const job = await schedules.getJob(`once-${schedule.id}`);
    expect(job?.data).toEqual({ scheduleId: schedule.id, occurrenceAt: at.getTime() });
    expect(await job?.getState()).toBe('delayed');

    const cancelled = await remove(schedule.id);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ ok: true, schedule: { id: schedule.id, status: 'cancelled', endedAt: expect.any(String) } });
    expect(await schedules.getJob(`once-${schedule.id}`)).toBeUndefined();
    // Cancelled once: the second is refused, as is an id no schedule has.
    expect((await remove(schedule.id)).json()).toMatchObject({ ok: false, error: 'SCHEDULE_NOT_FOUND' });
    expect((await remove(schedule.id)).statusCode).toBe(404);
    expect((await remove(987_654_321)).statusCode).toBe(404);

    expect((await audit(`conversation:${conversationId}`)).filter((row) => row.action === 'schedule.create')).toEqual([
      expect.objectContaining({ actor: 'alice', result: 'ok', detail: { scheduleId: schedule.id, at: at.toISOString(), promptChars: 33 } }),
    ]);
    expect((await audit(`schedule:${schedule.id}`)).map((row) => [row.action, row.actor, row.result, row.detail])).toEqual([
      ['schedule.cancel', 'alice', 'SCHEDULE_NOT_FOUND', null],
      ['schedule.cancel', 'alice', 'SCHEDULE_NOT_FOUND', null],
      ['schedule.cancel', 'alice', 'ok', { conversationId }],
    ]);
  });

  it('creates a cron schedule in a time zone: a job scheduler schedule-<id> with that pattern and zone; DELETE removes it', async () => {
    const conversationId = await newConversation('4102');
    const created = await post({ conversationId, prompt: 'Morning summary', cron: '0 9 * * 1-5', timeZone: 'Europe/Paris' });
    expect(created.statusCode).toBe(201);
    const { schedule } = created.json<{ schedule: Schedule }>();
    expect(schedule).toMatchObject({ runAt: null, cron: '0 9 * * 1-5', timeZone: 'Europe/Paris', status: 'active', createdBy: 'admin:alice' });

    expect(await schedules.getJobScheduler(`schedule-${schedule.id}`)).toMatchObject({ pattern: '0 9 * * 1-5', tz: 'Europe/Paris' });
    expect((await remove(schedule.id)).statusCode).toBe(200);
    expect(await schedules.getJobScheduler(`schedule-${schedule.id}`)).toBeUndefined();
    expect((await schedules.getDelayed()).filter((job) => job.data.scheduleId === schedule.id)).toEqual([]);
  });

  it('takes a deleted conversation\'s schedules out of BullMQ with it, not at their next time', async () => {
    const conversationId = await newConversation('4109');
    const cron = (await post({ conversationId, prompt: 'weekly', cron: '0 9 * * 1' })).json<{ schedule: Schedule }>().schedule;
    const once = (await post({ conversationId, prompt: 'once', at: new Date(Date.now() + hour).toISOString() })).json<{ schedule: Schedule }>().schedule;
    expect(await schedules.getJobScheduler(`schedule-${cron.id}`)).toBeDefined();
    const deleted = await app.inject({ method: 'DELETE', url: `/admin/conversations/${conversationId}?confirm=${encodeURIComponent('telegram:bot:4109::')}`, headers: auth });
    expect(deleted.statusCode).toBe(200);
    expect(await schedules.getJobScheduler(`schedule-${cron.id}`)).toBeUndefined();
    expect(await schedules.getJob(`once-${once.id}`)).toBeUndefined();
    expect((await list(`?conversationId=${conversationId}`)).length).toBe(0);
  });

  it('lists every status newest first, and one conversation\'s with conversationId', async () => {
    const first = await newConversation('4103');
    const second = await newConversation('4104');
    const ids: number[] = [];
    for (const [conversationId, cron] of [[first, '0 8 * * *'], [second, '0 12 * * *'], [first, '30 18 * * *']] as const) {
      ids.push((await post({ conversationId, prompt: `at ${cron}`, cron })).json<{ schedule: Schedule }>().schedule.id);
    }
    expect((await remove(ids[0] as number)).statusCode).toBe(200);

    const ofFirst = await list(`?conversationId=${first}`);
    expect(ofFirst.map((s) => [s.id, s.status])).toEqual([
      [ids[2], 'active'],
      [ids[0], 'cancelled'],
    ]);
    expect((await list(`?conversationId=${second}`)).map((s) => s.id)).toEqual([ids[1]]);
    const all = (await list()).map((s) => s.id);
    expect(all.filter((id) => ids.includes(id))).toEqual([ids[2], ids[1], ids[0]]);
    expect(await list('?conversationId=987654321')).toEqual([]);
    expect((await list('?limit=1')).length).toBe(1);
  });

  it('refuses each bad body with its code, stores and arms nothing, and audits the refusals that reached the action', async () => {
    const conversationId = await newConversation('4105');
    const before = await armedJobs();
    const soon = new Date(Date.now() + hour).toISOString();
    const refused: [unknown, number, string, string?][] = [
      [{ conversationId, prompt: 'neither' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'both', at: soon, cron: '0 9 * * *' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'past', at: new Date(Date.now() - hour).toISOString() }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'far', at: new Date(Date.now() + 400 * 24 * hour).toISOString() }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'words', at: 'tomorrow at nine' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'no offset', at: '2030-01-01T09:00:00' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'junk cron', cron: 'every day' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'seconds', cron: '* * * * * *' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'bad field', cron: '99 9 * * *' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'zone', cron: '0 9 * * *', timeZone: 'Mars/Olympus_Mons' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: '   ', cron: '0 9 * * *' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId, prompt: 'x'.repeat(4001), cron: '0 9 * * *' }, 400, 'SCHEDULE_INVALID'],
      [{ conversationId: 987_654_321, prompt: 'nobody', cron: '0 9 * * *' }, 404, 'CONVERSATION_NOT_FOUND'],
      [{ conversationId, cron: '0 9 * * *' }, 400, 'INVALID_REQUEST', 'prompt'],
      [{ prompt: 'where', cron: '0 9 * * *' }, 400, 'INVALID_REQUEST', 'conversationId'],
      [{ conversationId: 'abc', prompt: 'id', cron: '0 9 * * *' }, 400, 'INVALID_REQUEST', 'conversationId'],
      [{ conversationId: 0, prompt: 'id', cron: '0 9 * * *' }, 400, 'INVALID_REQUEST', 'conversationId'],
      [{ conversationId: 1e20, prompt: 'id', cron: '0 9 * * *' }, 400, 'INVALID_REQUEST', 'conversationId'],
      [{ conversationId, prompt: 'extra', cron: '0 9 * * *', every: 'day' }, 400, 'INVALID_REQUEST', 'every'],
      [{ conversationId, prompt: 'long cron', cron: '0 '.repeat(150) }, 400, 'INVALID_REQUEST', 'cron'],
      [{ conversationId, prompt: 'typed', cron: 9 }, 400, 'INVALID_REQUEST', 'cron'],
      [{ conversationId, prompt: 'long zone', cron: '0 9 * * *', timeZone: 'Z'.repeat(65) }, 400, 'INVALID_REQUEST', 'timeZone'],
    ];
    for (const [body, status, error, field] of refused) {
      const answer = await post(body);
      expect(answer.statusCode, JSON.stringify(body).slice(0, 120)).toBe(status);
      expect(answer.json(), JSON.stringify(body).slice(0, 120)).toMatchObject({ ok: false, error, message: expect.any(String), ...(field ? { field } : {}) });
    }
    expect(await list(`?conversationId=${conversationId}`)).toEqual([]);
    expect(await armedJobs()).toEqual(before);
    // Schema refusals never reach the action and are not audited (docs/admin.md, "Audit log"); the others are.
    const rows = (await audit(`conversation:${conversationId}`)).filter((row) => row.action === 'schedule.create');
    expect(rows.map((row) => row.result)).toEqual(Array(12).fill('SCHEDULE_INVALID'));
    expect((await audit('conversation:987654321')).map((row) => [row.action, row.result])).toEqual([['schedule.create', 'CONVERSATION_NOT_FOUND']]);
  });

  it('answers 401 without a valid token on every schedule route, and stores nothing', async () => {
    const conversationId = await newConversation('4106');
    const wrong = { authorization: 'Bearer not-the-token-0123456789' };
    for (const answer of [
      await post({ conversationId, prompt: 'sneaky', cron: '0 9 * * *' }, {}),
      await post({ conversationId, prompt: 'sneaky', cron: '0 9 * * *' }, wrong),
      await app.inject({ method: 'GET', url: '/admin/schedules' }),
      await remove(1, {}),
    ]) {
      expect(answer.statusCode).toBe(401);
      expect(answer.json()).toMatchObject({ ok: false, error: 'UNAUTHORIZED' });
    }
    expect(await list(`?conversationId=${conversationId}`)).toEqual([]);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/admin/openapi.json', headers: auth })).json<{ paths: Record<string, Record<string, unknown>> }>();
    expect(Object.keys(doc.paths['/admin/schedules'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/admin/schedules/{id}'] ?? {})).toEqual(['delete']);
  });
});

describe('/admin/schedules while Redis is down', () => {
  let server: RedisServer;
  let redis: Redis;
  let producer: RedisClient;
  let queue: TurnQueue;
  let schedules: ScheduleQueue;
  let app: FastifyInstance;
  let armedBefore: { conversationId: number; id: number };

  beforeAll(async () => {
    // The schedules queue on a Redis of its own, stopped after the gateway is up: as when Redis goes away under a running gateway.
    server = await startRedis();
    producer = createRedisConnection(server.url, 'producer');
    producer.on('error', () => undefined);
    schedules = createScheduleQueue(producer, createRedisPrefix());
    schedules.on('error', () => undefined);
    await schedules.waitUntilReady();
    redis = new Redis(redisUrl());
    queue = createTurnQueue(redis, createRedisPrefix());
    const config = parseConfig(gatewayEnvSchema, { DATABASE_URL: db.url, REDIS_URL: redisUrl(), REDIS_PREFIX: createRedisPrefix(), LOG_LEVEL: 'silent', ADMIN_TOKEN: `alice:${token}` });
    app = await buildGatewayApp({ config, db: db.client.db, queue, schedules, redis, log: createLogger('schedule-outage-test', 'silent') });
    await app.ready();
    const conversationId = await createConversation(db.client.db, '4200');
    const made = await app.inject({ method: 'POST', url: '/admin/schedules', headers: auth, payload: { conversationId, prompt: 'before the outage', cron: '0 9 * * *' } });
    armedBefore = { conversationId, id: made.json<{ schedule: Schedule }>().schedule.id };
    await server.stop();
  });
  afterAll(async () => {
    await app?.close();
    producer?.disconnect();
    await queue?.close();
    redis?.disconnect();
    await server?.destroy();
  });

  it('answers 503 REDIS_UNAVAILABLE and leaves nothing active, so a retry is safe; cancelling still works', async () => {
    const conversationId = await createConversation(db.client.db, '4201');
    const answer = await app.inject({ method: 'POST', url: '/admin/schedules', headers: auth, payload: { conversationId, prompt: 'during the outage', cron: '0 9 * * *' } });
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({ ok: false, error: 'REDIS_UNAVAILABLE' });
    const items = (await app.inject({ method: 'GET', url: `/admin/schedules?conversationId=${conversationId}`, headers: auth })).json<{ items: Schedule[] }>().items;
    expect(items.map((s) => s.status)).toEqual(['cancelled']);
    const audited = (await app.inject({ method: 'GET', url: `/admin/audit?target=conversation:${conversationId}`, headers: auth })).json<{ items: AuditRow[] }>().items;
    expect(audited.map((row) => [row.action, row.result])).toEqual([['schedule.create', 'REDIS_UNAVAILABLE']]);

    // Cancelled in Postgres though still in BullMQ: its next occurrence finds it cancelled and runs nothing.
    const cancelled = await app.inject({ method: 'DELETE', url: `/admin/schedules/${armedBefore.id}`, headers: auth });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ schedule: { id: armedBefore.id, conversationId: armedBefore.conversationId, status: 'cancelled' } });
  });
});

async function createConversation(database: Parameters<typeof storeInboundEvent>[0], chatId: string): Promise<number> {
  const stored = await storeInboundEvent(database, {
    platform: 'telegram', accountId: 'bot', eventId: `sched-${chatId}`, conversationKey: `telegram:bot:${chatId}::`,
    chatId, threadId: '', userScope: '', userId: 'u1', text: 'hello', replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
  });
  return stored.conversationId;
}
