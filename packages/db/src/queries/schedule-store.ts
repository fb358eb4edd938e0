import type { Database } from '../client.ts';
import { AdvisoryLock } from '../lock-ids.ts';

/** A schedule as the admin API, the tool and `/schedules` show it. */
export interface ScheduleRow {
  id: number;
  conversationId: number;
  prompt: string;
  runAt: Date | null;
  cron: string | null;
  timeZone: string;
  status: 'active' | 'ended' | 'cancelled';
  createdBy: string;
  createdAt: Date;
  endedAt: Date | null;
  lastOccurrenceAt: Date | null;
  lastOutcome: 'ran' | 'missed' | 'paused' | null;
  runs: number;
  missed: number;
}

export interface NewSchedule {
  conversationId: number;
  prompt: string;
  runAt: Date | null;
  cron: string | null;
  timeZone: string;
  createdBy: string;
  /** The tool call's key (see the column): a second create with the same key returns the first schedule. */
  originKey?: string | null;
  /** USER_MAX_SCHEDULES for `createdBy`'s active schedules; null: no limit (an operator). */
  maxActive: number | null;
}

export type CreateScheduleOutcome =
  | { kind: 'created' | 'existing'; schedule: ScheduleRow }
  | { kind: 'over_limit'; limit: number }
  | { kind: 'conversation_missing' };

/**
 * A row as postgres.js hands it over on drizzle's client: drizzle makes the
 * client's timestamp parsers and serializers pass-through (it converts them
 * itself), so a raw statement reads timestamps as text and must send them as
 * ISO text (`::timestamptz`), never as a Date, which it cannot serialize.
 */
type RawSchedule = {
  id: string;
  conversation_id: string;
  prompt: string;
  run_at: RawTime | null;
  cron: string | null;
  time_zone: string;
  status: ScheduleRow['status'];
  created_by: string;
  created_at: RawTime;
  ended_at: RawTime | null;
  last_occurrence_at: RawTime | null;
  last_outcome: ScheduleRow['lastOutcome'];
  runs: number;
  missed: number;
};

/** Text from drizzle's client, a Date from a plain postgres.js client. */
type RawTime = string | Date;

function toDate(raw: RawTime): Date;
function toDate(raw: RawTime | null): Date | null;
function toDate(raw: RawTime | null): Date | null {
  return raw === null ? null : new Date(raw);
}

/** A time as a raw statement's parameter (see RawSchedule); cast with `::timestamptz` where it is used. */
function timeParam(time: Date | null): string | null {
  return time === null ? null : time.toISOString();
}

function toRow(raw: RawSchedule): ScheduleRow {
  return {
    id: Number(raw.id),
    conversationId: Number(raw.conversation_id),
    prompt: raw.prompt,
    runAt: toDate(raw.run_at),
    cron: raw.cron,
    timeZone: raw.time_zone,
    status: raw.status,
    createdBy: raw.created_by,
    createdAt: toDate(raw.created_at),
    endedAt: toDate(raw.ended_at),
    lastOccurrenceAt: toDate(raw.last_occurrence_at),
    lastOutcome: raw.last_outcome,
    runs: raw.runs,
    missed: raw.missed,
  };
}

/**
 * Creates a schedule under the creator's advisory lock, so USER_MAX_SCHEDULES
 * holds when two turns of one user race. A known origin key returns the
 * schedule it made (a turn run again after a crash), whatever the count.
 */
export async function createSchedule(db: Database, input: NewSchedule): Promise<CreateScheduleOutcome> {
  return db.$client.begin(async (sql) => {
    await sql`select pg_advisory_xact_lock(${AdvisoryLock.ScheduleCreator}, hashtext(${input.createdBy}))`;
    if (input.originKey) {
      const [known] = await sql<RawSchedule[]>`select * from schedules where origin_key = ${input.originKey}`;
      if (known) return { kind: 'existing', schedule: toRow(known) } as const;
    }
    if (input.maxActive !== null) {
      const [count] = await sql<{ n: number }[]>`select count(*)::int as n from schedules where created_by = ${input.createdBy} and status = 'active'`;
      if ((count?.n ?? 0) >= input.maxActive) return { kind: 'over_limit', limit: input.maxActive } as const;
    }
    const [conversation] = await sql<{ id: string }[]>`select id from conversations where id = ${input.conversationId}`;
    if (!conversation) return { kind: 'conversation_missing' } as const;
    const [row] = await sql<RawSchedule[]>`
      insert into schedules (conversation_id, prompt, run_at, cron, time_zone, created_by, origin_key)
      values (${input.conversationId}, ${input.prompt}, ${timeParam(input.runAt)}::timestamptz, ${input.cron}, ${input.timeZone}, ${input.createdBy}, ${input.originKey ?? null})
      returning *`;
    return { kind: 'created', schedule: toRow(row as RawSchedule) } as const;
  });
}

export interface ScheduleFilter {
  conversationId?: number;
  /** Only active ones (the default for chat and the tool); false: every status, newest first. */
  activeOnly?: boolean;
  limit?: number;
}

export async function listSchedules(db: Database, filter: ScheduleFilter = {}): Promise<ScheduleRow[]> {
  const conversationId = filter.conversationId ?? null;
  const rows = await db.$client<RawSchedule[]>`
    select * from schedules
    where (${conversationId}::bigint is null or conversation_id = ${conversationId}) and (not ${filter.activeOnly ?? false}::boolean or status = 'active')
    order by id desc limit ${filter.limit ?? 500}`;
  return rows.map(toRow);
}

export async function getSchedule(db: Database, id: number): Promise<ScheduleRow | undefined> {
  const [row] = await db.$client<RawSchedule[]>`select * from schedules where id = ${id}`;
  return row ? toRow(row) : undefined;
}

/**
 * Cancels an active schedule; with `conversationId`, only one of that
 * conversation (a chat user or the agent can reach no other). Undefined:
 * none such was active.
 */
export async function cancelSchedule(db: Database, target: { id: number; conversationId?: number }): Promise<ScheduleRow | undefined> {
  const conversationId = target.conversationId ?? null;
  const [row] = await db.$client<RawSchedule[]>`
    update schedules set status = 'cancelled', ended_at = now()
    where id = ${target.id} and status = 'active' and (${conversationId}::bigint is null or conversation_id = ${conversationId})
    returning *`;
  return row ? toRow(row) : undefined;
}

/** What one occurrence needs, in one read: the schedule, and where and whether its conversation runs. */
export interface OccurrenceState {
  schedule: ScheduleRow;
  conversation: { id: number; key: string; platform: string; accountId: string; chatId: string; threadId: string; userScope: string; status: 'active' | 'suspended' };
}

export async function loadOccurrenceState(db: Database, scheduleId: number): Promise<OccurrenceState | undefined> {
  const [row] = await db.$client<(RawSchedule & { key: string; platform: string; account_id: string; chat_id: string; thread_id: string; user_scope: string; conversation_status: 'active' | 'suspended' })[]>`
    select s.*, c.key, c.platform, c.account_id, c.chat_id, c.thread_id, c.user_scope, c.status as conversation_status
    from schedules s join conversations c on c.id = s.conversation_id where s.id = ${scheduleId}`;
  if (!row) return undefined;
  return {
    schedule: toRow(row),
    conversation: { id: Number(row.conversation_id), key: row.key, platform: row.platform, accountId: row.account_id, chatId: row.chat_id, threadId: row.thread_id, userScope: row.user_scope, status: row.conversation_status },
  };
}

/**
 * Records how one occurrence went; a one-off ends with it whatever the
 * outcome (it had its one time: one that fell while its conversation was
 * suspended is not run later). Guarded by the occurrence's time, so a job run
 * twice counts once.
 */
export async function recordOccurrence(db: Database, input: { scheduleId: number; occurrenceAt: Date; outcome: 'ran' | 'missed' | 'paused' }): Promise<void> {
  const { scheduleId, outcome } = input;
  const occurrenceAt = timeParam(input.occurrenceAt);
  await db.$client`
    update schedules set
      last_occurrence_at = ${occurrenceAt}::timestamptz, last_outcome = ${outcome},
      runs = runs + case when ${outcome} = 'ran' then 1 else 0 end,
      missed = missed + case when ${outcome} = 'missed' then 1 else 0 end,
      status = case when run_at is not null and status = 'active' then 'ended' else status end,
      ended_at = case when run_at is not null and status = 'active' then now() else ended_at end
    where id = ${scheduleId} and (last_occurrence_at is null or last_occurrence_at < ${occurrenceAt}::timestamptz)`;
}
