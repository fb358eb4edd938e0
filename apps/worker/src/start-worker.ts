import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import Fastify from 'fastify';
import { builtinTools, createOpenAiRuntime, createToolRegistry } from '@switchboard/agent';
import type { WorkerConfig } from '@switchboard/config';
import { createDbClient } from '@switchboard/db';
import { createLogger, type Logger } from '@switchboard/logger';
import { createTelegramSender, type PlatformSender } from '@switchboard/platforms';
import { createRedisConnection, createTurnQueue } from '@switchboard/queue';
import { createLeaseManager } from './conversation-lease.ts';
import { startRecoverySweep } from './recovery-sweep.ts';
import { createTurnWorker } from './turn-worker.ts';
import type { WorkerContext } from './worker-context.ts';

export interface RunningWorker {
  workerId: string;
  /** Health endpoint base URL. */
  url: string;
  close(): Promise<void>;
}

export async function startWorker(config: WorkerConfig, log: Logger = createLogger('worker', config.LOG_LEVEL)): Promise<RunningWorker> {
  const workerId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const db = createDbClient(config.DATABASE_URL, { max: 20, applicationName: 'switchboard-worker' });
  const redis = createRedisConnection(config.REDIS_URL, 'worker');
  redis.on('error', (err) => log.warn({ err }, 'redis connection error'));
  const queue = createTurnQueue(redis, config.REDIS_PREFIX);
  queue.on('error', (err) => log.warn({ err }, 'queue error'));

  const senders = new Map<string, PlatformSender>();
  if (config.TELEGRAM_BOT_TOKEN) {
    senders.set('telegram', createTelegramSender({ token: config.TELEGRAM_BOT_TOKEN, apiRoot: config.TELEGRAM_API_ROOT, messageLimit: config.TELEGRAM_MESSAGE_LIMIT }));
  }

  const ctx: WorkerContext = {
    config,
    db: db.db,
    runtime: createOpenAiRuntime({
      baseURL: config.MODEL_BASE_URL,
      apiKey: config.MODEL_API_KEY,
      model: config.MODEL_NAME,
      timeoutMs: config.MODEL_TIMEOUT_MS,
      maxToolIterations: config.MAX_TOOL_ITERATIONS,
      tools: createToolRegistry(builtinTools),
    }),
    senders,
    leases: createLeaseManager(redis, config.REDIS_PREFIX),
    log: log.child({ workerId }),
    workerId,
    running: new Map(),
  };

  const worker = createTurnWorker(ctx, redis, config.REDIS_PREFIX);
  const sweep = startRecoverySweep({ db: db.db, sql: db.sql, queue, log, intervalMs: config.SWEEP_INTERVAL_MS });

  const health = Fastify({ logger: false });
  health.get('/healthz', async () => ({ ok: true, workerId, running: ctx.running.size }));
  const url = await health.listen({ host: config.HOST, port: config.WORKER_PORT });
  log.info({ workerId, url, platforms: [...senders.keys()] }, 'worker started');

  return {
    workerId,
    url,
    async close() {
      // Stop taking jobs and let running turns finish, then queues, Redis, Postgres.
      await sweep.stop();
      await worker.close();
      await health.close();
      await queue.close();
      redis.disconnect();
      await db.close();
    },
  };
}
