import { createInterface } from 'node:readline';
import { createConversationActions } from '@switchboard/actions';
import * as agent from '@switchboard/agent';
import { estimateMessageTokens, type AgentRuntime } from '@switchboard/agent';
import { parseConfig, workerEnvSchema } from '@switchboard/config';
import { createDbClient } from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { compressConversation } from '../../apps/worker/src/compression/compress-session.ts';
import { createWorkerMetrics } from '../../apps/worker/src/worker-metrics.ts';
import { createHistoryCache } from '../../apps/worker/src/turn/history-cache.ts';
import { createDeferredConversations } from '../../apps/worker/src/conversation/deferred-conversations.ts';
import { createHeartbeatHealth } from '../../apps/worker/src/liveness/heartbeat-health.ts';
import { createApprovalWaiters } from '../../apps/worker/src/approvals/approval-waiters.ts';
import { createRunningTurns } from '../../apps/worker/src/conversation/running-turns.ts';
import type { LeaseManager } from '../../apps/worker/src/conversation/conversation-lease.ts';
import type { WorkerContext } from '../../apps/worker/src/worker-context.ts';

/**
 * One compression of one conversation, in a process of its own, through the
 * worker's own path (`compressConversation`, force off) — what a worker's
 * preflight does, without a turn around it. test/e2e/compression-race starts
 * several of these at once, and SIGKILLs one mid-summary.
 *
 *   node --import tsx test/support/compress-once.ts
 *
 * Environment: the worker's (DATABASE_URL, REDIS_URL, REDIS_PREFIX,
 * MODEL_BASE_URL, MODEL_CONTEXT_TOKENS, COMPRESSION_KEEP_RATIO,
 * SUMMARY_TIMEOUT_MS, …, parsed with workerEnvSchema) plus
 *   CONVERSATION_ID        the conversation to compress
 *   COMPRESS_ONCE_GATE     "stdin": print `READY` once set up, then wait for
 *                          a line on stdin before compressing (a start
 *                          barrier, so process start-up time does not
 *                          spread the racers apart)
 *
 * Prints `READY` (with the gate), then one line
 * `COMPRESS-ONCE {"outcome":…,"oldSessionId":…,"childSessionId":…}` and exits 0.
 * Logs go to stdout as pino JSON lines; read the marker line only.
 */

// Not exported: importing this file runs it. The race test spells the same two strings.
const readyLine = 'READY';
const resultMarker = 'COMPRESS-ONCE ';

async function main(): Promise<void> {
  const conversationId = Number(process.env.CONVERSATION_ID);
  if (!Number.isInteger(conversationId) || conversationId <= 0) throw new Error('CONVERSATION_ID must be a positive integer');
  const config = parseConfig(workerEnvSchema, { LOG_LEVEL: 'warn', ...process.env });
  const log = createLogger('compress-once', config.LOG_LEVEL);
  const db = createDbClient(config.DATABASE_URL, { max: 4, applicationName: 'compress-once' });
  const unusedBook: agent.ScheduleBook = { create: async () => ({ ok: false, code: 'UNUSED', message: 'no schedules here' }), list: async () => [], cancel: async () => false };
  // The worker's tools as offered (the schedule tool included), for the same fixed request text.
  const tools = agent.createToolRegistry([...agent.builtinTools, agent.createScheduleTool(unusedBook)] as agent.Tool[]);
  const unused = (what: string) => async (): Promise<never> => {
    throw new Error(`compress-once has no ${what}`);
  };
  // Built only for its fixed request text (the tool schemas as sent), which the preflight estimate counts as the worker's does.
  const { fixedRequestText } = agent.createOpenAiRuntime({ baseURL: config.MODEL_BASE_URL, apiKey: config.MODEL_API_KEY, model: config.MODEL_NAME, timeoutMs: config.MODEL_TIMEOUT_MS, maxToolIterations: 1, tools });
  const runtime: AgentRuntime = { runTurn: unused('agent runtime'), fixedRequestText };
  const leases: LeaseManager = { runHeld: unused('leases'), releaseAllOf: unused('leases') };
  const ctx: WorkerContext = {
    config,
    db: db.db,
    runtime,
    runtimes: { runtimeFor: unused('runtimes'), close: async () => undefined },
    summariser: agent.createSummariser({ baseURL: config.MODEL_BASE_URL, apiKey: config.MODEL_API_KEY, model: config.MODEL_NAME, timeoutMs: config.SUMMARY_TIMEOUT_MS }),
    fixedRequestTokens: estimateMessageTokens(config.SYSTEM_PROMPT, fixedRequestText),
    senders: new Map(),
    media: { fetchers: new Map() },
    history: createHistoryCache(db.db, { maxMessages: 0, maxBytes: 0 }),
    leases,
    log: log.child({ pid: process.pid }),
    workerId: `compress-once-${process.pid}`,
    metrics: createWorkerMetrics(),
    emit: async () => undefined,
    actions: createConversationActions({ db: db.db, emit: async () => undefined, log }),
    running: createRunningTurns(),
    deferred: createDeferredConversations(),
    wake: unused('queue'),
    heartbeat: createHeartbeatHealth(config.WORKER_DEAD_AFTER_MS),
    approvalWaiters: createApprovalWaiters(),
    reactions: { show: () => undefined, statusOf: () => undefined },
    schedules: { deps: { db: db.db, schedules: undefined as never, log }, maxPerUser: 0 },
    closing: false,
  };
  try {
    // Open the pool's connection before the barrier, so racers do not also race to connect.
    await db.db.$client`select 1`;
    if (process.env.COMPRESS_ONCE_GATE === 'stdin') {
      const lines = createInterface({ input: process.stdin });
      const go = new Promise<void>((resolve) => lines.once('line', () => resolve()));
      process.stdout.write(`${readyLine}\n`);
      await go;
      lines.close();
    }
    const result = await compressConversation(ctx, conversationId, { force: false });
    process.stdout.write(`${resultMarker}${JSON.stringify(result)}\n`);
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
