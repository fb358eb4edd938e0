import cronParser from 'cron-parser';
import { normaliseText } from './normalise-text.ts';

/**
 * Scheduled turns (docs/schedules.md): the pure rules. A schedule belongs to
 * a conversation and runs as a turn in it with its prompt, once at `at` or at
 * every time of `cron` in `timeZone`.
 */

/** What a schedule asks for, as the tool, the admin API and the store take it. */
export interface ScheduleSpec {
  prompt: string;
  /** ISO 8601 time with an offset or Z: runs once then. */
  at?: string;
  /** A five-field cron expression (minute hour day month weekday): runs at every match. */
  cron?: string;
  /** An IANA time zone for `cron` (default UTC); ignored by `at`, which carries its own offset. */
  timeZone?: string;
}

/** A checked spec: exactly one of `runAt` and `cron`, the prompt cleaned. */
export type ValidSchedule =
  | { kind: 'once'; prompt: string; runAt: Date; timeZone: string }
  | { kind: 'cron'; prompt: string; cron: string; timeZone: string; nextAt: Date };

export type ScheduleSpecCheck = { ok: true; schedule: ValidSchedule } | { ok: false; code: 'SCHEDULE_INVALID'; message: string };

/** The longest prompt a schedule keeps (the same order as a chat message). */
export const schedulePromptMaxChars = 4000;

/**
 * The shortest gap between two occurrences of one schedule: a cron that
 * fires more often than once a minute (a six-field expression with seconds,
 * or none at all) would be a load generator, not a reminder.
 */
export const scheduleMinIntervalMs = 60_000;

/** How far ahead a one-off may be set: a year, so a typo in the year is refused rather than kept for decades. */
export const scheduleMaxAheadMs = 366 * 24 * 3600 * 1000;

const isoTimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Checks a spec against `now`; a bad one is a value with one line saying what is wrong, never a throw. */
export function checkScheduleSpec(spec: ScheduleSpec, now: Date): ScheduleSpecCheck {
  const bad = (message: string): ScheduleSpecCheck => ({ ok: false, code: 'SCHEDULE_INVALID', message });
  const prompt = normaliseText(spec.prompt ?? '').trim();
  if (prompt === '') return bad('prompt must not be empty');
  if (prompt.length > schedulePromptMaxChars) return bad(`prompt must be at most ${schedulePromptMaxChars} characters`);
  const timeZone = spec.timeZone ?? 'UTC';
  if (!isTimeZone(timeZone)) return bad(`timeZone "${timeZone}" is not an IANA time zone`);
  if ((spec.at === undefined) === (spec.cron === undefined)) return bad('give exactly one of at (an ISO time) and cron (a cron expression)');
  if (spec.at !== undefined) return checkOnce({ prompt, at: spec.at, timeZone, now });
  return checkCron({ prompt, cron: spec.cron ?? '', timeZone, now });
}

function checkOnce(input: { prompt: string; at: string; timeZone: string; now: Date }): ScheduleSpecCheck {
  const { prompt, at, timeZone, now } = input;
  const runAt = new Date(at);
  if (!isoTimePattern.test(at) || Number.isNaN(runAt.getTime()) || !isCalendarTime(at)) return { ok: false, code: 'SCHEDULE_INVALID', message: 'at must be an ISO 8601 time with an offset, such as 2026-12-01T09:00:00Z' };
  if (runAt.getTime() <= now.getTime()) return { ok: false, code: 'SCHEDULE_INVALID', message: `at (${runAt.toISOString()}) is not in the future (now ${now.toISOString()})` };
  if (runAt.getTime() - now.getTime() > scheduleMaxAheadMs) return { ok: false, code: 'SCHEDULE_INVALID', message: 'at must be within a year from now' };
  return { ok: true, schedule: { kind: 'once', prompt, runAt, timeZone } };
}

function checkCron(input: { prompt: string; cron: string; timeZone: string; now: Date }): ScheduleSpecCheck {
  const { prompt, timeZone, now } = input;
  const cron = input.cron.trim().replace(/\s+/g, ' ');
  const bad = (message: string): ScheduleSpecCheck => ({ ok: false, code: 'SCHEDULE_INVALID', message });
  if (cron.split(' ').length !== 5) return bad('cron must have five fields: minute hour day-of-month month day-of-week');
  const times = nextCronTimes({ cron, timeZone, after: now, count: 3 });
  if (!times) return bad(`cron "${cron}" is not a valid cron expression`);
  if (times.length === 0) return bad(`cron "${cron}" never fires within two years`);
  for (let i = 1; i < times.length; i++) {
    if ((times[i] as Date).getTime() - (times[i - 1] as Date).getTime() < scheduleMinIntervalMs) return bad('cron must not fire more than once a minute');
  }
  return { ok: true, schedule: { kind: 'cron', prompt, cron, timeZone, nextAt: times[0] as Date } };
}

/** How far ahead a cron's times are looked for: bounds the search, which for a rare or impossible date (31 April) would otherwise walk for a second. */
const cronHorizonMs = 2 * 366 * 24 * 3600 * 1000;

/** The next `count` times of a cron after `after`, within two years (fewer if it ends); null when the expression does not parse. */
export function nextCronTimes(input: { cron: string; timeZone: string; after: Date; count: number }): Date[] | null {
  let iterator: ReturnType<typeof cronParser.parseExpression<false>>;
  try {
    const endDate = new Date(input.after.getTime() + cronHorizonMs);
    iterator = cronParser.parseExpression(input.cron, { currentDate: input.after, endDate, tz: input.timeZone, iterator: false });
  } catch {
    return null;
  }
  const times: Date[] = [];
  try {
    for (let i = 0; i < input.count && iterator.hasNext(); i++) times.push(iterator.next().toDate());
  } catch {
    // Past the horizon: cron-parser throws "Out of the timespan range" rather than ending.
  }
  return times;
}

/** Whether the date and time as written exist (no 30 February, no 24:00): Date would roll them over silently. */
function isCalendarTime(at: string): boolean {
  const [year, month, day, hour, minute, second] = [0, 5, 8, 11, 14, 17].map((start) => Number(at.slice(start, start + (start === 0 ? 4 : 2)))) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && (at.length < 19 || at[16] !== ':' || second <= 59);
}

export function isTimeZone(name: string): boolean {
  if (name.length === 0 || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * The user a scheduled occurrence's turn counts as: `schedule:<id>` (no
 * platform gives a person such an id, as with `hook:<name>`), so per-user
 * limits count each schedule apart and its approval questions are named for
 * nobody: only APPROVERS may answer them, the timeout declines otherwise.
 */
export function scheduleUserId(scheduleId: number): string {
  return `${scheduleUserPrefix}${scheduleId}`;
}

const scheduleUserPrefix = 'schedule:';

export function isScheduleUserId(userId: string): boolean {
  return userId.startsWith(scheduleUserPrefix);
}

/** The event id one occurrence is stored and deduplicated under: one turn per schedule and time, whoever runs it how often. */
export function scheduleEventId(scheduleId: number, occurrenceAt: Date): string {
  return `schedule:${scheduleId}:${occurrenceAt.getTime()}`;
}

export type ScheduleStatus = 'active' | 'ended' | 'cancelled';

/** What the occurrence handler found, read in one statement. */
export interface OccurrenceFacts {
  /** null: the schedule is gone (its conversation was deleted). */
  scheduleStatus: ScheduleStatus | null;
  conversationStatus: 'active' | 'suspended' | null;
  occurrenceAt: Date;
  now: Date;
  /** SCHEDULE_CATCHUP_MS: how late an occurrence may still run. */
  catchUpMs: number;
}

/**
 * What becomes of one occurrence. `run`: store it as the conversation's
 * input. `missed`: it came later than the catch-up window (everything was
 * down), recorded and not run. `paused`: the conversation is suspended, so
 * this occurrence is skipped and the next runs once it is resumed. `drop`:
 * the schedule ended, was cancelled or is gone; its BullMQ entry is removed.
 */
export type OccurrenceDecision = 'run' | 'missed' | 'paused' | 'drop';

export function decideOccurrence(facts: OccurrenceFacts): OccurrenceDecision {
  if (facts.scheduleStatus !== 'active' || facts.conversationStatus === null) return 'drop';
  if (facts.conversationStatus === 'suspended') return 'paused';
  if (facts.now.getTime() - facts.occurrenceAt.getTime() > facts.catchUpMs) return 'missed';
  return 'run';
}

/** One schedule as `/schedules` and the `schedule` tool's list show it. */
export interface ScheduleLine {
  id: number;
  prompt: string;
  runAt: Date | null;
  cron: string | null;
  timeZone: string;
}

/** The chat reply of `/schedules`: one line per active schedule, or a line saying there are none. */
export function formatScheduleList(lines: readonly ScheduleLine[]): string {
  if (lines.length === 0) return 'No schedules in this conversation.';
  const rows = lines.map((line) => {
    const when = line.cron !== null ? `cron "${line.cron}" (${line.timeZone})` : `once at ${line.runAt?.toISOString() ?? '?'}`;
    const prompt = line.prompt.length > 80 ? `${line.prompt.slice(0, 79)}…` : line.prompt;
    return `#${line.id} ${when}: ${prompt}`;
  });
  return [`Schedules in this conversation (cancel with /schedules cancel <id>):`, ...rows].join('\n');
}
