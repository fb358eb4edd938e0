import postgres from 'postgres';
import { makeSchedule, type ScheduleDeps } from '@switchboard/actions';
import { createDbClient } from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { createRedisConnection, createScheduleQueue } from '@switchboard/queue';
import { summarizeLatencies, type LatencySummary } from '../latency-histogram.ts';
import { f, latencyRow } from './bench-format.ts';
import { benchBotToken, type SystemUnderTest } from './system-under-test.ts';

/** A burst of reminders all due at one moment (docs/schedules.md): how late they are answered, and that each is answered once. */
export interface ScheduleBurst {
  schedules: number;
  /** Occurrences stored as input (one per schedule when none is lost or doubled). */
  stored: number;
  /** Replies the platform got. */
  answered: number;
  /** Schedules with more than one stored occurrence, or conversations with more than one reply. */
  duplicates: number;
  /** Due time → the occurrence's input stored (BullMQ's delay, the occurrence job). */
  storedLateMs: LatencySummary;
  /** Due time → the reply sent to the platform (the whole turn after it). */
  answeredLateMs: LatencySummary;
}

const botId = benchBotToken.split(':')[0] as string;

/**
 * `count` Telegram conversations, each given a one-off schedule (through
 * packages/actions, as the admin API and the tool make them) due at the same
 * moment, a little after the last is made. Then waits until every reply is
 * sent and reads, from Postgres, when each occurrence was stored and each
 * reply sent: a reminder burst at 09:00 as the workers meet it.
 */
export async function measureScheduleBurst(sut: Pick<SystemUnderTest, 'databaseUrl' | 'redisUrl' | 'redisPrefix'>, options: { count: number; firstChatId?: number; log?: (line: string) => void }): Promise<ScheduleBurst> {
  const sql = postgres(sut.databaseUrl, { max: 1, onnotice: () => undefined });
  const db = createDbClient(sut.databaseUrl, { max: 4 });
  const redis = createRedisConnection(sut.redisUrl, 'worker');
  const queue = createScheduleQueue(redis, sut.redisPrefix);
  const door: ScheduleDeps = { db: db.db, schedules: queue, log: createLogger('bench', 'warn') };
  try {
    const ids = await seedConversations(sql, options.firstChatId ?? 970_000, options.count);
    // Due once the last is made: making them (a transaction and a BullMQ add each) is not what is measured.
    const dueAt = new Date(Date.now() + 2_000 + options.count * 5);
    for (let i = 0; i < ids.length; i += 20) {
      const made = await Promise.all(ids.slice(i, i + 20).map((conversationId) => makeSchedule(door, { conversationId, spec: { prompt: 'Reminder: stretch.', at: dueAt.toISOString() }, createdBy: 'admin:bench', maxActive: null })));
      if (made.some((m) => m.kind !== 'created')) throw new Error(`a schedule was not made: ${JSON.stringify(made.find((m) => m.kind !== 'created'))}`);
    }
    if (Date.now() >= dueAt.getTime()) throw new Error('making the schedules took past their due time');
    options.log?.(`bench: ${ids.length} schedules due at ${dueAt.toISOString()}`);
    return await readBurst(sql, { ids, dueAt });
  } finally {
    await queue.close();
    redis.disconnect();
    await db.close();
    await sql.end({ timeout: 5 });
  }
}

async function seedConversations(sql: postgres.Sql, firstChatId: number, count: number): Promise<number[]> {
  const rows = await sql<{ id: string }[]>`
    insert into conversations (key, platform, account_id, chat_id)
    select 'telegram:' || ${botId}::text || ':' || c || '::', 'telegram', ${botId}, c::text
    from generate_series(${firstChatId}::bigint, ${firstChatId + count - 1}::bigint) as c
    returning id`;
  return rows.map((r) => Number(r.id));
}

async function readBurst(sql: postgres.Sql, burst: { ids: number[]; dueAt: Date }): Promise<ScheduleBurst> {
  const { ids, dueAt } = burst;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [row] = await sql<{ sent: number }[]>`select count(*)::int as sent from outbox where conversation_id in ${sql(ids)} and status = 'sent'`;
    if ((row?.sent ?? 0) >= ids.length || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const stored = await sql<{ conversation_id: string; late_ms: number }[]>`
    select conversation_id, extract(epoch from received_at - ${dueAt.toISOString()}::timestamptz) * 1000 as late_ms
    from inbound_events where conversation_id in ${sql(ids)} and event_id like 'schedule:%'`;
  const sent = await sql<{ conversation_id: string; late_ms: number }[]>`
    select conversation_id, extract(epoch from sent_at - ${dueAt.toISOString()}::timestamptz) * 1000 as late_ms
    from outbox where conversation_id in ${sql(ids)} and status = 'sent'`;
  const perConversation = (rows: { conversation_id: string }[]) => rows.reduce((m, r) => m.set(r.conversation_id, (m.get(r.conversation_id) ?? 0) + 1), new Map<string, number>());
  const doubled = [...perConversation(stored).values(), ...perConversation(sent).values()].filter((n) => n > 1).length;
  return {
    schedules: ids.length,
    stored: stored.length,
    answered: sent.length,
    duplicates: doubled,
    storedLateMs: summarizeLatencies(stored.map((r) => Number(r.late_ms))),
    answeredLateMs: summarizeLatencies(sent.map((r) => Number(r.late_ms))),
  };
}

/** The report's section (docs/benchmarks.md). */
export function renderScheduleBurst(b: ScheduleBurst): string[] {
  return [
    '',
    `## A reminder burst (${b.schedules} one-off schedules due at the same moment, one per Telegram chat, instant model; milliseconds after the due time)`,
    '',
    '| figure | count | p50 | p95 | p99 | max | target |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    latencyRow('due → the occurrence stored as the chat\'s input', b.storedLateMs, '—'),
    latencyRow('due → the reply sent to the platform', b.answeredLateMs, '—'),
    '',
    `${b.stored} of ${b.schedules} occurrences stored, ${b.answered} answered, ${b.duplicates} doubled (want ${b.schedules}, ${b.schedules}, 0). Occurrences run on the worker's \`schedules\` queue (BullMQ delayed jobs), each storing one input and waking its conversation; the turns then run as any (docs/schedules.md). Whole run: ${f(b.answeredLateMs.max / 1000, 1)} s from the due time to the last reply.`,
  ];
}
