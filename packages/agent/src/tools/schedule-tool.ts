import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineTool, type ToolCaller } from './define-tool.ts';

/** One schedule as the tool reports it. */
export interface BookedSchedule {
  id: number;
  prompt: string;
  runAt: Date | null;
  cron: string | null;
  timeZone: string;
}

export type BookingResult = { ok: true; schedule: BookedSchedule; existing: boolean } | { ok: false; code: string; message: string };

/**
 * Where the `schedule` tool keeps schedules: the worker's, over Postgres and
 * BullMQ (packages/actions' schedule door). The tool knows no store; it
 * checks who calls and words the results for the model.
 */
export interface ScheduleBook {
  create(caller: ToolCaller, request: { prompt: string; at?: string; cron?: string; timeZone?: string; originKey: string }): Promise<BookingResult>;
  list(caller: ToolCaller): Promise<BookedSchedule[]>;
  cancel(caller: ToolCaller, id: number): Promise<boolean>;
}

// Kept short: the schema rides on every model request of every turn (fixedRequestText). Lengths and
// formats are checked by core's checkScheduleSpec, which answers with the line the model reads.
const scheduleArgs = z
  .object({
    prompt: z.string().optional().describe('message to yourself when it runs'),
    at: z.string().optional().describe('once, ISO time with offset'),
    cron: z.string().optional().describe('or repeat: 5-field cron'),
    timeZone: z.string().optional().describe('IANA zone for cron'),
    action: z.enum(['create', 'list', 'cancel']).optional(),
    id: z.number().int().optional().describe('to cancel'),
  })
  .strict();

/**
 * The built-in `schedule` tool (DESIGN §3: `{prompt, at?, cron?, timeZone?}`,
 * with `action` and `id` added for list and cancel). A schedule belongs to
 * the turn's conversation and counts against the turn's user. A turn no
 * person started (a schedule's own occurrence, a hook) may list and cancel
 * but never create: a reminder that makes reminders would multiply itself.
 */
export function createScheduleTool(book: ScheduleBook) {
  return defineTool({
    name: 'schedule',
    description: "Run a prompt later in this conversation (once `at`, or by `cron`); also list or cancel this conversation's schedules.",
    schema: scheduleArgs,
    run: async (args, { caller }) => {
      if (!caller) throw new Error('schedules are not available in this turn');
      const action = args.action ?? 'create';
      if (action === 'list') return describeList(await book.list(caller));
      if (action === 'cancel') {
        if (args.id === undefined) throw new Error('give the id of the schedule to cancel');
        return (await book.cancel(caller, args.id)) ? `schedule #${args.id} cancelled` : `error: no active schedule #${args.id} in this conversation`;
      }
      if (/^(hook|schedule):/.test(caller.userId)) throw new Error('a scheduled or triggered turn cannot create schedules');
      if (args.prompt === undefined) throw new Error('give the prompt to run');
      const request = { prompt: args.prompt, ...(args.at !== undefined ? { at: args.at } : {}), ...(args.cron !== undefined ? { cron: args.cron } : {}), ...(args.timeZone !== undefined ? { timeZone: args.timeZone } : {}) };
      const result = await book.create(caller, { ...request, originKey: originKeyOf(caller, request) });
      if (!result.ok) return `error: ${result.code}: ${result.message}`;
      return `${result.existing ? 'already scheduled' : 'scheduled'}: ${describeOne(result.schedule)}`;
    },
  });
}

/** The same call in the same turn (the turn run again after a crash) makes the same key, so one schedule. */
function originKeyOf(caller: ToolCaller, request: object): string {
  return `${caller.turnKey}:${createHash('sha256').update(JSON.stringify(request)).digest('hex').slice(0, 32)}`;
}

function describeOne(schedule: BookedSchedule): string {
  const when = schedule.cron !== null ? `every "${schedule.cron}" in ${schedule.timeZone}` : `once at ${schedule.runAt?.toISOString() ?? '?'}`;
  return `#${schedule.id} ${when}: ${schedule.prompt}`;
}

function describeList(schedules: BookedSchedule[]): string {
  if (schedules.length === 0) return 'no schedules in this conversation';
  return schedules.map(describeOne).join('\n');
}
