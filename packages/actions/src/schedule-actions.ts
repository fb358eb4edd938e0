import { checkScheduleSpec, type ScheduleSpec } from '@switchboard/core';
import { cancelSchedule, createSchedule, listSchedules, type Database, type ScheduleRow } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { armSchedule, disarmSchedule, type ScheduleQueue } from '@switchboard/queue';

/**
 * Making, listing and cancelling schedules (docs/schedules.md), one door for
 * the three callers: the `schedule` tool, `/schedules` in chat and the admin
 * API. Postgres first, then BullMQ: a schedule stored but not armed (Redis
 * out for that moment) is armed by the next worker start (rearmSchedules),
 * and one cancelled but still armed runs nothing (its status is read first).
 */
export interface ScheduleDeps {
  db: Database;
  schedules: ScheduleQueue;
  log: Logger;
}

export interface ScheduleRequest {
  conversationId: number;
  spec: ScheduleSpec;
  /** A chat user's key, or `admin:<token name>`. */
  createdBy: string;
  /** USER_MAX_SCHEDULES for a chat user; null for an operator. */
  maxActive: number | null;
  /** The tool call's key: a turn run again gets the schedule it made before. */
  originKey?: string;
  now?: Date;
}

export type ScheduleOutcome =
  | { kind: 'created' | 'existing'; schedule: ScheduleRow; armed: boolean }
  | { kind: 'invalid'; code: 'SCHEDULE_INVALID'; message: string }
  | { kind: 'over_limit'; code: 'SCHEDULE_LIMIT'; limit: number }
  | { kind: 'not_found'; code: 'CONVERSATION_NOT_FOUND' };

export async function makeSchedule(deps: ScheduleDeps, request: ScheduleRequest): Promise<ScheduleOutcome> {
  const check = checkScheduleSpec(request.spec, request.now ?? new Date());
  if (!check.ok) return { kind: 'invalid', code: check.code, message: check.message };
  const valid = check.schedule;
  const stored = await createSchedule(deps.db, {
    conversationId: request.conversationId,
    prompt: valid.prompt,
    runAt: valid.kind === 'once' ? valid.runAt : null,
    cron: valid.kind === 'cron' ? valid.cron : null,
    timeZone: valid.timeZone,
    createdBy: request.createdBy,
    originKey: request.originKey ?? null,
    maxActive: request.maxActive,
  });
  if (stored.kind === 'over_limit') return { kind: 'over_limit', code: 'SCHEDULE_LIMIT', limit: stored.limit };
  if (stored.kind === 'conversation_missing') return { kind: 'not_found', code: 'CONVERSATION_NOT_FOUND' };
  return { kind: stored.kind, schedule: stored.schedule, armed: await armQuietly(deps, stored.schedule) };
}

async function armQuietly(deps: ScheduleDeps, schedule: ScheduleRow): Promise<boolean> {
  if (schedule.status !== 'active') return false;
  try {
    await armSchedule(deps.schedules, schedule);
    return true;
  } catch (err) {
    deps.log.warn({ err, scheduleId: schedule.id }, 'schedule stored but not armed; the next worker start arms it');
    return false;
  }
}

export type CancelOutcome = { kind: 'cancelled'; schedule: ScheduleRow } | { kind: 'not_found'; code: 'SCHEDULE_NOT_FOUND' };

/** Cancels an active schedule; with `conversationId`, only one of that conversation. */
export async function endSchedule(deps: ScheduleDeps, target: { id: number; conversationId?: number }): Promise<CancelOutcome> {
  const schedule = await cancelSchedule(deps.db, target);
  if (!schedule) return { kind: 'not_found', code: 'SCHEDULE_NOT_FOUND' };
  try {
    await disarmSchedule(deps.schedules, schedule.id);
  } catch (err) {
    // Still armed: its next occurrence finds it cancelled, runs nothing and disarms it then.
    deps.log.warn({ err, scheduleId: schedule.id }, 'schedule cancelled but not disarmed');
  }
  return { kind: 'cancelled', schedule };
}

export function listActiveSchedules(deps: Pick<ScheduleDeps, 'db'>, conversationId: number): Promise<ScheduleRow[]> {
  return listSchedules(deps.db, { conversationId, activeOnly: true });
}
