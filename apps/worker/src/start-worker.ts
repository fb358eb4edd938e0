import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import Fastify, { type FastifyInstance } from 'fastify';
import type { RedisClient } from '@switchboard/queue';
import { createConversationActions, createLifecycleEmitter } from '@switchboard/actions';
import { createBuiltinTools, createFallbackRuntime, createMcpToolSource, createScheduleTool, createSummariser, createToolRegistry, estimateMessageTokens, type FallbackRuntime, type McpToolSource } from '@switchboard/agent';
import { staleTurnRule } from '@switchboard/core';
import { readMcpServersFile, resolveModelFallbacks, type WorkerConfig } from '@switchboard/config';
import { createDbClient, cutOffRunningTurns, databaseReach, markWorkerStatus, registerWorker, type DbClient } from '@switchboard/db';
import { createLogger, type Logger } from '@switchboard/logger';
import { createDiscordSender, createSlackSender, createTelegramSender, type PlatformSender } from '@switchboard/platforms';
import { createRedisConnection, redisReachOf, createTurnQueue, enqueueWake, type TurnQueue } from '@switchboard/queue';
import { createApprovalWaiters, subscribeApprovalWaiters } from './approvals/approval-waiters.ts';
import { tidySettledQuestions } from './approvals/tidy-questions.ts';
import { createLeaseManager } from './conversation/conversation-lease.ts';
import { createDeferredConversations } from './conversation/deferred-conversations.ts';
import { createRunningTurns, listenForSignals } from './conversation/running-turns.ts';
import { createHeartbeatHealth } from './liveness/heartbeat-health.ts';
import { createHistoryCache } from './turn/history-cache.ts';
import { startEventWebhooks } from './delivery/event-webhooks.ts';
import { startRecoverySweep } from './liveness/recovery-sweep.ts';
import { applyRestartRules } from './liveness/restart-guard.ts';
import { createReactionBoard } from './turn/reaction-board.ts';
import { showWaitingInput } from './turn/status-reactions.ts';
import { createTurnRuntimes } from './turn/turn-runtime.ts';
import { createTurnWorker } from './conversation/turn-worker.ts';
import { createMediaReach } from './turn/media-reach.ts';
import { createScheduleBook } from './schedules/schedule-book.ts';
import { createWorkerSchedules, type WorkerSchedules } from './schedules/start-schedules.ts';
import type { WorkerContext } from './worker-context.ts';
import { startWorkerHeartbeat, type WorkerHeartbeat } from './liveness/worker-heartbeat.ts';
import { createWorkerMetrics, type WorkerMetrics } from './worker-metrics.ts';

export interface RunningWorker {
  workerId: string;
  /** Health endpoint base URL. */
  url: string;
  /** The registry behind /metrics; the process entry counts errors that reached no handler there. */
  metrics: WorkerMetrics;
  close(): Promise<void>;
}

export interface StartWorkerOptions {
  /**
   * What ends the process once its heartbeat finds it declared dead (main.ts:
   * exit at once, declaredDeadExitCode). In-process workers (tests) only stop
   * taking work; a process exit is the only way to drop every turn uncommitted.
   */
  onDeclaredDead?: () => void;
}

export async function startWorker(config: WorkerConfig, log: Logger = createLogger('worker', config.LOG_LEVEL), options: StartWorkerOptions = {}): Promise<RunningWorker> {
  const workerId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const db = createDbClient(config.DATABASE_URL, { max: config.WORKER_DB_POOL_SIZE, applicationName: 'switchboard-worker', ...databaseReach(config) });
  const redis = createRedisConnection(redisReachOf(config), 'worker');
  redis.on('error', (err) => log.warn({ err }, 'redis connection error'));
  const queue = createTurnQueue(redis, config.REDIS_PREFIX);
  queue.on('error', (err) => log.warn({ err }, 'queue error'));

  const mcp = await startMcpTools(config, log);
  const schedules = createWorkerSchedules({ config, db: db.db, redis, turns: queue, log });
  const ctx = createContext({ config, log, workerId, db, redis, queue, mcp, schedules });
  ctx.metrics.trackRunningTurns(() => ctx.running.size());

  const subscriber = await openSubscriber(ctx, log);

  // Liveness (docs/restarts.md): registered with a heartbeat before taking work; dead
  // peers are found and restart loops suspended now and on every sweep.
  await registerWorker(db.db, { id: workerId, hostname: hostname(), pid: process.pid });
  let stopTakingWork = (): void => undefined;
  const heartbeat = startWorkerHeartbeat({
    databaseUrl: config.DATABASE_URL, prepare: config.DATABASE_PREPARED_STATEMENTS, workerId, intervalMs: config.HEARTBEAT_INTERVAL_MS, health: ctx.heartbeat, log,
    onDeclaredDead: () => (options.onDeclaredDead ?? stopTakingWork)(),
  });
  await applyRestartRules(ctx);

  const worker = createTurnWorker(ctx, redis, config.REDIS_PREFIX);
  await schedules.start();
  const beforeSweep = async () => {
    await applyRestartRules(ctx);
    await tidySettledQuestions(ctx);
  };
  const sweep = startRecoverySweep({ db: db.db, queue, log, intervalMs: config.SWEEP_INTERVAL_MS, beforeSweep });
  stopTakingWork = () => {
    ctx.closing = true;
    sweep.stop().catch((err: unknown) => log.warn({ err }, 'sweep not stopped cleanly'));
    worker.close(true).catch((err: unknown) => log.warn({ err }, 'turn worker not closed cleanly'));
    schedules.stop().catch((err: unknown) => log.warn({ err }, 'schedule worker not closed cleanly'));
  };
  const webhooks = config.EVENT_WEBHOOK_SECRET && config.EVENT_WEBHOOK_URLS.length > 0 ? startEventWebhooks({ db: db.db, secret: config.EVENT_WEBHOOK_SECRET, log }) : undefined;

  const health = Fastify({ logger: false });
  health.get('/healthz', async () => ({ ok: true, workerId, running: ctx.running.size() }));
  health.get('/metrics', async (_request, reply) => reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics()));
  const url = await health.listen({ host: config.HOST, port: config.WORKER_PORT });
  log.info({ workerId, url, platforms: [...ctx.senders.keys()] }, 'worker started');

  const parts: WorkerParts = { config, log, workerId, ctx, db, redis, subscriber, queue, worker, sweep, webhooks, heartbeat, health, mcp, schedules };
  return {
    workerId,
    url,
    metrics: ctx.metrics,
    close: () => closeWorker(parts),
  };
}

/** What a started worker holds and closeWorker lets go of. */
interface WorkerParts {
  config: WorkerConfig;
  log: Logger;
  workerId: string;
  ctx: WorkerContext;
  db: DbClient;
  redis: RedisClient;
  subscriber: RedisClient;
  queue: TurnQueue;
  worker: ReturnType<typeof createTurnWorker>;
  sweep: ReturnType<typeof startRecoverySweep>;
  webhooks: ReturnType<typeof startEventWebhooks> | undefined;
  heartbeat: WorkerHeartbeat;
  health: FastifyInstance;
  mcp: McpToolSource | undefined;
  schedules: WorkerSchedules;
}

async function closeWorker({ config, log, workerId, ctx, db, redis, subscriber, queue, worker, sweep, webhooks, heartbeat, health, mcp, schedules }: WorkerParts): Promise<void> {
  // Stop taking jobs, give running turns the drain window to finish, then
  // cut off what still runs (left for resume), then queues, Redis, Postgres.
  ctx.closing = true;
  await markWorkerStatus(db.db, workerId, 'stopping').catch((err: unknown) => log.warn({ err }, 'could not mark the worker stopping'));
  await sweep.stop();
  await schedules.stop();
  const drained = worker.close();
  const timer = setTimeout(() => {
    ctx.running.stopAll('shutdown');
  }, config.DRAIN_TIMEOUT_MS);
  await drained;
  clearTimeout(timer);
  // What was still running when the drain window closed was cut off by this restart: count it once.
  // This worker is stopping, so by the stale-turn rule its running turns are cut off, not superseded.
  const cutOff = await cutOffRunningTurns(db.db, { workerId }, staleTurnRule(config.WORKER_DEAD_AFTER_MS).cutOff);
  ctx.metrics.countRestartIncrements(cutOff.length);
  if (cutOff.length > 0) log.warn({ conversations: cutOff }, 'turns cut off by shutdown; they resume after restart');
  // Codex children end with the worker (terminate, then kill); their threads are resumed by the next worker's children.
  await ctx.runtimes.close().catch((err: unknown) => log.warn({ err }, 'codex children not closed cleanly'));
  await mcp?.close().catch((err: unknown) => log.warn({ err }, 'MCP servers not closed cleanly'));
  await webhooks?.stop();
  await heartbeat.stop();
  await markWorkerStatus(db.db, workerId, 'stopped');
  await health.close();
  await schedules.close();
  await queue.close();
  subscriber.disconnect();
  redis.disconnect();
  await db.close();
}

function createSenders(config: WorkerConfig): Map<string, PlatformSender> {
  const senders = new Map<string, PlatformSender>();
  if (config.TELEGRAM_BOT_TOKEN) {
    senders.set('telegram', createTelegramSender({ token: config.TELEGRAM_BOT_TOKEN, apiRoot: config.TELEGRAM_API_ROOT, messageLimit: config.TELEGRAM_MESSAGE_LIMIT }));
  }
  if (config.DISCORD_BOT_TOKEN) {
    senders.set('discord', createDiscordSender({ token: config.DISCORD_BOT_TOKEN, apiUrl: config.DISCORD_API_URL, messageLimit: config.DISCORD_MESSAGE_LIMIT }));
  }
  if (config.SLACK_BOT_TOKEN) {
    senders.set('slack', createSlackSender({ token: config.SLACK_BOT_TOKEN, apiUrl: config.SLACK_API_URL, messageLimit: config.SLACK_MESSAGE_LIMIT }));
  }
  return senders;
}

/**
 * MCP_SERVERS (docs/tools.md, "MCP tool servers"): each enabled server
 * started and its tools listed before the worker takes work. Unset, nothing
 * of MCP is loaded. The file was checked by main.ts; a bad one here (an
 * in-process worker) throws its ConfigError.
 */
async function startMcpTools(config: WorkerConfig, log: Logger): Promise<McpToolSource | undefined> {
  if (!config.MCP_SERVERS) return undefined;
  const mcp = createMcpToolSource({ servers: readMcpServersFile(config.MCP_SERVERS), log });
  await mcp.start();
  return mcp;
}

interface RuntimeParts {
  config: WorkerConfig;
  log: Logger;
  workerId: string;
  metrics: WorkerMetrics;
  mcp: McpToolSource | undefined;
  schedules: WorkerSchedules;
}

/**
 * The OpenAI runtime over MODEL_BASE_URL and then MODEL_FALLBACKS in order
 * (docs/turns.md "Model fallbacks"); with no fallbacks it is the one model as
 * before. The fallbacks' keys are read from the variables they name.
 */
function createRuntime({ config, log, workerId, metrics, mcp, schedules }: RuntimeParts): FallbackRuntime {
  const builtins = [...createBuiltinTools({ waitMaxSeconds: config.TOOL_WAIT_MAX_SECONDS }), createScheduleTool(createScheduleBook(schedules.deps, config.USER_MAX_SCHEDULES))];
  const tools = createToolRegistry(builtins as Parameters<typeof createToolRegistry>[0], mcp ? [mcp] : []);
  const fallbacks = resolveModelFallbacks(config.MODEL_FALLBACKS, process.env).map((f) => ({ baseURL: f.baseUrl, apiKey: f.apiKey, model: f.model }));
  return createFallbackRuntime({
    endpoints: [{ baseURL: config.MODEL_BASE_URL, apiKey: config.MODEL_API_KEY, model: config.MODEL_NAME }, ...fallbacks],
    cooldownMs: config.MODEL_FALLBACK_COOLDOWN_MS,
    timeoutMs: config.MODEL_TIMEOUT_MS,
    maxToolIterations: config.MAX_TOOL_ITERATIONS,
    tools,
    turnWaitBudgetMs: config.TURN_WAIT_BUDGET_SECONDS * 1000,
    retry: { maxRetries: config.MODEL_MAX_RETRIES, maxWaitMs: config.MODEL_RETRY_MAX_WAIT_MS },
    onRetry: (retry) => log.info({ workerId, ...retry }, 'model request retrying'),
    onFallback: (move) => {
      metrics.countModelFallback(move.from, move.to);
      log.warn({ workerId, ...move }, 'model failed; the turn moves to the next model');
    },
  });
}

/** Conversation and approval signals reach this process on its own subscriber connection (a subscribed connection can do nothing else). */
async function openSubscriber(ctx: WorkerContext, log: Logger): Promise<RedisClient> {
  const { config } = ctx;
  const subscriber = createRedisConnection(redisReachOf(config), 'subscriber');
  subscriber.on('error', (err) => log.warn({ err }, 'redis subscriber error'));
  // Busy modes queue and collect: the new message waits for a later turn, shown queued (⏳) meanwhile.
  await listenForSignals({ subscriber, prefix: config.REDIS_PREFIX, turns: ctx.running, onInput: (active) => showWaitingInput(ctx, active), log });
  await subscribeApprovalWaiters(subscriber, config.REDIS_PREFIX, ctx.approvalWaiters, log);
  return subscriber;
}

interface ContextParts {
  config: WorkerConfig;
  log: Logger;
  workerId: string;
  db: DbClient;
  redis: RedisClient;
  queue: TurnQueue;
  mcp: McpToolSource | undefined;
  schedules: WorkerSchedules;
}

function createContext({ config, log, workerId, db, redis, queue, mcp, schedules }: ContextParts): WorkerContext {
  const senders = createSenders(config);
  const metrics = createWorkerMetrics();
  const runtime = createRuntime({ config, log, workerId, metrics, mcp, schedules });
  const emit = createLifecycleEmitter({ db: db.db, redis, prefix: config.REDIS_PREFIX, webhookUrls: config.EVENT_WEBHOOK_URLS, log });
  // Counted on the first turn that asks, not at start: counting reads the token table, and a worker
  // that has run no turn holds none of it (docs/benchmarks.md, "Memory from the production build").
  // Counted again when the text changes: an MCP server's tool list may (docs/tools.md).
  let fixedRequestTokens: { text: string; tokens: number } | undefined;
  return {
    config,
    db: db.db,
    runtime,
    runtimes: createTurnRuntimes(config, runtime, log.child({ workerId })),
    summariser: createSummariser({ baseURL: config.MODEL_BASE_URL, apiKey: config.MODEL_API_KEY, model: config.MODEL_NAME, timeoutMs: config.SUMMARY_TIMEOUT_MS }),
    get fixedRequestTokens() {
      const text = runtime.fixedRequestText;
      if (fixedRequestTokens?.text !== text) fixedRequestTokens = { text, tokens: estimateMessageTokens(config.SYSTEM_PROMPT, text) };
      return fixedRequestTokens.tokens;
    },
    senders,
    media: createMediaReach(config),
    history: createHistoryCache(db.db, { maxMessages: config.HISTORY_CACHE_MESSAGES, maxBytes: config.HISTORY_CACHE_BYTES }),
    leases: createLeaseManager(redis, { prefix: config.REDIS_PREFIX, ttlMs: config.CONVERSATION_LEASE_TTL_MS, workerId, log: log.child({ workerId }) }),
    log: log.child({ workerId }),
    workerId,
    metrics,
    emit,
    actions: createConversationActions({ db: db.db, emit, log }),
    running: createRunningTurns(),
    heartbeat: createHeartbeatHealth(config.WORKER_DEAD_AFTER_MS),
    deferred: createDeferredConversations(),
    wake: (conversationId, reason) => enqueueWake(queue, { conversationId, inboundEventId: null, reason }),
    approvalWaiters: createApprovalWaiters(),
    reactions: createReactionBoard(senders, log.child({ workerId })),
    schedules: { deps: schedules.deps, maxPerUser: config.USER_MAX_SCHEDULES },
    closing: false,
  };
}
