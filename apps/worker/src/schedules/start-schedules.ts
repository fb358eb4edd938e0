import type { ScheduleDeps } from '@switchboard/actions';
import type { WorkerConfig } from '@switchboard/config';
import type { Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { createScheduleQueue, type RedisClient, type ScheduleQueue, type TurnQueue } from '@switchboard/queue';
import { createScheduleWorker, rearmSchedules } from './schedule-worker.ts';

/** A worker's part in schedules: the queue it arms, and once started, the worker running occurrences. */
export interface WorkerSchedules {
  /** For the `schedule` tool and `/schedules`: the schedule door's dependencies. */
  deps: ScheduleDeps;
  queue: ScheduleQueue;
  /** Re-arms every active schedule from Postgres, then runs occurrences; after the worker is registered. */
  start(): Promise<void>;
  /** Stops taking occurrences (a job running finishes). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export interface ScheduleParts {
  config: WorkerConfig;
  db: Database;
  redis: RedisClient;
  turns: TurnQueue;
  log: Logger;
}

/** Schedules in a worker (docs/schedules.md); every worker runs occurrences, BullMQ hands each to one. */
export function createWorkerSchedules({ config, db, redis, turns, log }: ScheduleParts): WorkerSchedules {
  const queue = createScheduleQueue(redis, config.REDIS_PREFIX);
  queue.on('error', (err) => log.warn({ err }, 'schedule queue error'));
  const deps: ScheduleDeps = { db, schedules: queue, log };
  let worker: ReturnType<typeof createScheduleWorker> | undefined;
  return {
    deps,
    queue,
    async start() {
      const armed = await rearmSchedules(deps);
      if (armed > 0) log.info({ armed }, 'schedules re-armed from Postgres');
      worker = createScheduleWorker(
        { db, queue: turns, schedules: queue, redis, redisPrefix: config.REDIS_PREFIX, catchUpMs: config.SCHEDULE_CATCHUP_MS, maxQueuedInput: config.MAX_QUEUED_INPUT, log },
        redis,
      );
    },
    async stop() {
      await worker?.close();
    },
    async close() {
      await worker?.close();
      await queue.close();
    },
  };
}
