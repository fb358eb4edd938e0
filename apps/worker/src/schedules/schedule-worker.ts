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
    // drainDelay: how long an idle worker blocks before it looks again (BullMQ's default 5 s). Any job added wakes it at
    // once (BullMQ's marker), and with delayed jobs it wakes at the first one's time (at most every 10 s), so the wait
    // only bounds an empty queue's polling: a minute, not 5 s, keeps every worker's eight idle commands off each
    // turn (the turn-cost budget saw them land at random); below the few minutes after which some networks drop an
    // idle connection unseen.
    // Stalled jobs are checked at BullMQ's 30 s default: the occurrence job of a worker killed in its few milliseconds
    // waits up to a minute for another (docs/schedules.md).
    { connection, prefix: bullPrefix(deps.redisPrefix, connection), concurrency: 4, drainDelay: 60 },
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
