import { Worker, type Job } from 'bullmq';
import { bullPrefix, jobCatalog, JobName, preciseNow, QueueName, type CompactConversationJob, type RedisClient, type WakeConversationJob } from '@switchboard/queue';
import { isRetryableCode, type ErrorCodeOf } from '@switchboard/core';
import { runCompactionJob } from '../compression/run-compaction.ts';
import { runConversation } from './run-conversation.ts';
import type { WorkerContext } from '../worker-context.ts';

type Handler = (job: Job) => Promise<unknown>;

/** CONVERSATION_BUSY: the one code of the `worker` family (docs/errors.md) that means "later". */
type RetryLaterCode = Extract<ErrorCodeOf<'worker'>, 'CONVERSATION_BUSY'>;

/**
 * Thrown by a handler, and only here in the job layer, to have BullMQ retry
 * the job with the catalog's backoff: an expected wait, not a failure (the
 * handlers themselves return what happened as a value).
 */
export class RetryLaterError extends Error {
  readonly code: RetryLaterCode;
  /** From the catalog (docs/errors.md): true, which is what has BullMQ retry the job. */
  readonly retryable: boolean;
  constructor(code: RetryLaterCode, message: string) {
    super(message);
    this.name = 'RetryLaterError';
    this.code = code;
    this.retryable = isRetryableCode(code);
  }
}

/**
 * The BullMQ worker for the turns queue. Every job name in the catalog must
 * have exactly one handler; start-up fails otherwise, not the first job.
 */
export function createTurnWorker(ctx: WorkerContext, connection: RedisClient, prefix: string): Worker {
  const handlers: Record<JobName, Handler> = {
    [JobName.WakeConversation]: async (job) => {
      const payload: WakeConversationJob = jobCatalog[JobName.WakeConversation].schema.parse(job.data);
      // The first attempt only: a retry's delay is the backoff, not the hand-off.
      if (payload.storedAt !== undefined && job.attemptsMade === 0) ctx.metrics.observeWakeDelay(preciseNow() - payload.storedAt);
      return runConversation(ctx, payload.conversationId);
    },
    [JobName.CompactConversation]: async (job) => {
      const payload: CompactConversationJob = jobCatalog[JobName.CompactConversation].schema.parse(job.data);
      // Retried with backoff only while another worker runs the conversation; a no-op
      // (the session moved on, nothing to gain) is a success that says so.
      const outcome = await runCompactionJob(ctx, payload, job.id);
      if (outcome.kind === 'busy') throw new RetryLaterError('CONVERSATION_BUSY', `conversation ${payload.conversationId} is busy; the compaction will be retried`);
      return outcome.result;
    },
  };
  for (const name of Object.values(JobName)) {
    if (!handlers[name]) throw new Error(`no handler for job ${name}`);
  }
  const worker = new Worker(
    QueueName.Turns,
    async (job) => {
      const handler = handlers[job.name as JobName];
      if (!handler) throw new Error(`unknown job ${job.name}`);
      return handler(job);
    },
    { connection, prefix: bullPrefix(prefix, connection), concurrency: ctx.config.WORKER_CONCURRENCY, lockDuration: 60_000 },
  );
  worker.on('error', (err) => ctx.log.warn({ err }, 'turn worker error'));
  worker.on('failed', (job, err) => {
    // Expected while another worker runs the conversation: the job is retried with backoff.
    if (err instanceof RetryLaterError) ctx.log.debug({ jobId: job?.id, attempts: job?.attemptsMade }, 'compaction waits for the conversation');
    else ctx.log.warn({ jobId: job?.id, attempts: job?.attemptsMade, err }, 'wake-up job failed');
  });
  return worker;
}
