import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Queue } from 'bullmq';
import { auditAction, type AdminContext } from '../admin-context.ts';
import { AdminError } from '../admin-errors.ts';
import { errors, toIso } from '../schemas/common-schemas.ts';
import { FailedJobList, FailedJobsQuery, JobParams, QueueFigures, QueueParams } from '../schemas/operation-schemas.ts';

const states = ['waiting', 'active', 'delayed', 'failed', 'prioritized', 'paused', 'completed'] as const;

/** BullMQ figures per queue, failed jobs with their error, and retrying a failed job. */
export function registerQueueRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  // The turns and the schedule occurrences (docs/schedules.md): a failed occurrence is retried like any job (it is idempotent).
  const queues: Queues = new Map<string, Queue>([
    [ctx.queue.name, ctx.queue],
    [ctx.schedules.name, ctx.schedules],
  ]);
  registerQueueFiguresRoute(scope, queues);
  registerFailedJobsRoute(scope, queues);
  registerRetryRoute(scope, ctx, queues);
}

/** The queues the admin API shows, by name. */
type Queues = ReadonlyMap<string, Queue>;

function findQueue(queues: Queues, name: string): Queue {
  const queue = queues.get(name);
  if (!queue) throw new AdminError('QUEUE_NOT_FOUND', `no queue ${name}; queues: ${[...queues.keys()].join(', ')}`, { field: 'queue' });
  return queue;
}

function registerQueueFiguresRoute(scope: FastifyInstance, queues: Queues): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/queue',
    { schema: { tags: ['queue'], summary: 'Job counts per queue and state', response: { 200: QueueFigures, ...errors(503) } } },
    async () => {
      const figures = await Promise.all(
        [...queues.values()].map(async (queue) => {
          const counts = await redisCall(() => queue.getJobCounts(...states));
          return { name: queue.name, ...Object.fromEntries(states.map((state) => [state, counts[state] ?? 0])) } as { name: string } & Record<(typeof states)[number], number>;
        }),
      );
      return { queues: figures };
    },
  );
}

function registerFailedJobsRoute(scope: FastifyInstance, queues: Queues): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/queue/:queue/failed',
    {
      schema: { tags: ['queue'], summary: 'Failed jobs, newest first, with their error', params: QueueParams, querystring: FailedJobsQuery, response: { 200: FailedJobList, ...errors(400, 404, 503) } },
    },
    async (request) => {
      const queue = findQueue(queues, request.params.queue);
      const offset = request.query.offset ?? 0;
      const limit = request.query.limit ?? 50;
      const jobs = await redisCall(() => queue.getFailed(offset, offset + limit - 1));
      return { queue: queue.name, items: jobs.filter((job) => job !== undefined && job !== null).map(viewFailedJob) };
    },
  );
}

function registerRetryRoute(scope: FastifyInstance, ctx: AdminContext, queues: Queues): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().post(
    '/queue/:queue/jobs/:jobId/retry',
    {
      schema: {
        tags: ['queue'],
        summary: 'Move a failed job back to waiting',
        params: JobParams,
        response: { 200: Type.Object({ ok: Type.Literal(true), jobId: Type.String() }), ...errors(404, 409, 503) },
      },
    },
    async (request) => {
      const queue = findQueue(queues, request.params.queue);
      const jobId = request.params.jobId;
      const audit = (result: string) => auditAction(ctx, ctx.db, request, { action: 'job.retry', target: `job:${queue.name}/${jobId}`, result });
      const job = await redisCall(() => queue.getJob(jobId));
      if (!job) {
        await audit('JOB_NOT_FOUND');
        throw new AdminError('JOB_NOT_FOUND', `no job ${jobId} in ${queue.name}`);
      }
      const state = await redisCall(() => job.getState());
      if (state !== 'failed') {
        await audit('JOB_NOT_FAILED');
        throw new AdminError('JOB_NOT_FAILED', `job ${jobId} is ${state}, not failed`);
      }
      await redisCall(() => job.retry('failed'));
      await audit('ok');
      return { ok: true as const, jobId };
    },
  );
}

interface FailedJobLike {
  id?: string;
  name: string;
  data: unknown;
  failedReason?: string;
  attemptsMade: number;
  stacktrace?: string[] | null;
  timestamp?: number;
  finishedOn?: number;
}

function viewFailedJob(job: FailedJobLike) {
  return {
    id: String(job.id),
    name: job.name,
    data: job.data,
    failedReason: job.failedReason ?? '',
    attemptsMade: job.attemptsMade,
    stacktrace: job.stacktrace ?? [],
    createdAt: job.timestamp ? toIso(new Date(job.timestamp)) : null,
    finishedAt: job.finishedOn ? toIso(new Date(job.finishedOn)) : null,
  };
}

/** The gateway's Redis connection fails fast while Redis is down; say so as 503 instead of a 500. */
async function redisCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new AdminError('REDIS_UNAVAILABLE', 'Redis did not answer', { cause: error });
  }
}
