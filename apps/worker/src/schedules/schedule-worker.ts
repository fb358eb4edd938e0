import { Worker } from 'bullmq';
import { listSchedules } from '@switchboard/db';
import { armSchedule, bullPrefix, occurrenceJobSchema, occurrenceTimeOf, scheduleQueueName, type OccurrenceJob, type RedisClient } from '@switchboard/queue';
import { runOccurrence, type OccurrenceDeps } from './run-occurrence.ts';

/**
 * The BullMQ worker of the schedules queue: each job is one occurrence
 * (runOccurrence). Its own small concurrency: an occurrence only stores an
 * event and wakes the conversation, the turn itself runs on the turns queue.
 */
export function createScheduleWorker(deps: OccurrenceDeps, connection: RedisClient): Worker<OccurrenceJob> {
  const worker = new Worker<OccurrenceJob>(
    scheduleQueueName,
    async (job) => {
      const data = occurrenceJobSchema.parse(job.data);
      const occurrenceAt = occurrenceTimeOf({ data, opts: job.opts, id: job.id });
      if (!occurrenceAt) {
        deps.log.warn({ jobId: job.id }, 'schedule job without an occurrence time; dropped');
        return { decision: 'drop', scheduleId: data.scheduleId };
      }
      const result = await runOccurrence(deps, { scheduleId: data.scheduleId, occurrenceAt });
      deps.log.info({ jobId: job.id, ...result }, 'schedule occurrence handled');
      return result;
    },
    // Quiet when idle: it blocks until the next occurrence is due or a marker says one was added, waking at
    // most every 30 s (drainDelay, seconds) instead of BullMQ's 5, and checks for stalled jobs at BullMQ's
    // 30 s default: an idle worker costs Redis almost nothing (the turn budget test counts every command).
    // The price: the occurrence job of a worker killed in its few milliseconds waits up to a minute for another.
    { connection, prefix: bullPrefix(deps.redisPrefix, connection), concurrency: 4, drainDelay: 30 },
  );
  worker.on('error', (err) => deps.log.warn({ err }, 'schedule worker error'));
  worker.on('failed', (job, err) => deps.log.warn({ jobId: job?.id, attempts: job?.attemptsMade, err }, 'schedule occurrence failed; BullMQ retries it'));
  return worker;
}

/**
 * Puts every active schedule back into BullMQ from Postgres, at each
 * worker's start: idempotent (fixed scheduler and job ids), so a Redis that
 * lost its data, or a schedule whose arming failed after it was stored, is
 * armed again. Returns how many were armed.
 */
export async function rearmSchedules(deps: Pick<OccurrenceDeps, 'db' | 'schedules' | 'log'>): Promise<number> {
  let armed = 0;
  for (const schedule of await listSchedules(deps.db, { activeOnly: true, limit: 100_000 })) {
    try {
      await armSchedule(deps.schedules, schedule);
      armed++;
    } catch (err) {
      deps.log.warn({ err, scheduleId: schedule.id }, 'schedule not re-armed; the next start tries again');
    }
  }
  return armed;
}
