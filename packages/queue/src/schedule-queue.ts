import { Queue, type Job, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { bullPrefix, type RedisClient } from './redis-connection.ts';

/** The queue of schedule occurrences (docs/schedules.md): its own, so a burst of turns never delays a reminder's due time. */
export const scheduleQueueName = 'schedules';

/** The one job name in the schedules queue. */
export const occurrenceJobName = 'occurrence' as const;

export const occurrenceJobSchema = z.object({
  scheduleId: z.number().int().positive(),
  /** A one-off's time (ms since the epoch); a cron occurrence's time is its BullMQ scheduler's (`prevMillis`). */
  occurrenceAt: z.number().int().positive().optional(),
});
export type OccurrenceJob = z.infer<typeof occurrenceJobSchema>;

export type ScheduleQueue = Queue<OccurrenceJob, unknown, string>;

/**
 * Retried while Postgres or Redis is out (the handler is idempotent: one
 * stored event per schedule and time); kept by count like the turns queue.
 */
const occurrenceOptions: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 5000, age: 7 * 24 * 3600 },
};

export function createScheduleQueue(connection: RedisClient, prefix: string): ScheduleQueue {
  return new Queue(scheduleQueueName, { connection, prefix: bullPrefix(prefix, connection) });
}

/** What BullMQ needs to know of a schedule: when it runs. */
export interface ArmableSchedule {
  id: number;
  runAt: Date | null;
  cron: string | null;
  timeZone: string;
}

function schedulerIdOf(scheduleId: number): string {
  return `schedule-${scheduleId}`;
}

function onceJobIdOf(scheduleId: number): string {
  return `once-${scheduleId}`;
}

/**
 * Puts a schedule's next run into BullMQ; idempotent, so every worker's
 * start-up re-arms every active schedule from Postgres (a Redis that lost its
 * data loses no schedule) and a schedule already armed is left as it is (its
 * job due now still runs). A cron schedule is a BullMQ job scheduler (its id
 * fixed by the schedule's); a one-off is a delayed job with a fixed id. No
 * second scheduler: BullMQ's is the only clock.
 */
export async function armSchedule(queue: ScheduleQueue, schedule: ArmableSchedule, now = Date.now()): Promise<void> {
  if (schedule.cron !== null) {
    // Armed already: left alone. Upserting a scheduler replaces its pending job by one at the next time
    // from now, so a start-up re-arm would drop an occurrence that fell due while every worker was down.
    if (await queue.getJobScheduler(schedulerIdOf(schedule.id))) return;
    await queue.upsertJobScheduler(
      schedulerIdOf(schedule.id),
      { pattern: schedule.cron, tz: schedule.timeZone },
      { name: occurrenceJobName, data: { scheduleId: schedule.id }, opts: occurrenceOptions },
    );
    return;
  }
  if (schedule.runAt === null) return;
  const at = schedule.runAt.getTime();
  await queue.add(occurrenceJobName, { scheduleId: schedule.id, occurrenceAt: at }, { ...occurrenceOptions, jobId: onceJobIdOf(schedule.id), delay: Math.max(0, at - now) });
}

/**
 * Takes a schedule out of BullMQ. A job already running is left to finish:
 * the handler reads the schedule's status first, so it runs nothing for a
 * cancelled schedule.
 */
export async function disarmSchedule(queue: ScheduleQueue, scheduleId: number): Promise<void> {
  await queue.removeJobScheduler(schedulerIdOf(scheduleId));
  try {
    await queue.remove(onceJobIdOf(scheduleId));
  } catch {
    // Locked by a worker running it right now: the handler finds the schedule cancelled.
  }
}

/**
 * The time an occurrence job stands for: a one-off's own, else the time its
 * job scheduler computed (`prevMillis`, also the tail of the job id
 * `repeat:<scheduler>:<ms>`). Null when the job carries neither.
 */
export function occurrenceTimeOf(job: Pick<Job<OccurrenceJob>, 'data' | 'opts' | 'id'>): Date | null {
  if (job.data.occurrenceAt !== undefined) return new Date(job.data.occurrenceAt);
  const prev = (job.opts as { prevMillis?: unknown }).prevMillis;
  if (typeof prev === 'number' && prev > 0) return new Date(prev);
  const tail = /:(\d+)$/.exec(job.id ?? '')?.[1];
  return tail ? new Date(Number(tail)) : null;
}
