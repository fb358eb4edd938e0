import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSchedule } from '@switchboard/actions';
import { createDbClient, type DbClient } from '@switchboard/db';
import { startRedis, type PostgresServer, type RedisServer } from '@switchboard/harness';
import { createLogger } from '@switchboard/logger';
import { createScheduleQueue, type ScheduleQueue } from '@switchboard/queue';
import { turnCostBudget } from '../budgets/turn-cost-budget.ts';
import { expectWithinBudget, measure, startCountingPostgres, type CostProbe } from '../support/cost-counters.ts';
import { callHook, createConversation, writeHooksFile } from '../support/hooks.ts';
import { TestSystem } from '../support/system.ts';
import { sendText, waitForIdle, waitForRequestFor } from '../support/turn-helpers.ts';

/**
 * The statement / command / platform-call budget of one ordinary Telegram
 * turn, an interrupted turn, a command, a compression (issue 31), a
 * triggered turn (POST /hooks/{name}, issue 34's guards) and one occurrence
 * of a schedule with its turn (issue 34, point 2). Its own
 * Postgres (with pg_stat_statements) and Redis, so the server-wide counters
 * hold this file's work only; heartbeats and sweeps are set minutes apart so
 * nothing periodic lands in a measurement. The budget and the reason for each
 * count live in test/budgets/turn-cost-budget.ts.
 */

/** Small enough that /compact of a few long messages summarises some; no ordinary turn here comes near the threshold. */
const contextTokens = 8000;
const quiet = { HEARTBEAT_INTERVAL_MS: '600000', WORKER_DEAD_AFTER_MS: '1800000', SWEEP_INTERVAL_MS: '600000' };
/** The hook's Telegram chat: its conversation is made before the gateway starts (HOOKS_FILE names it by id), under the key ingress gives that chat. */
const hookChat = 9005;
const hookSecret = 'budget-hook-secret-0123456789';
/**
 * The scheduled turn's chat, and how far ahead its one-off is set: past the
 * quiet wait before the counters are zeroed, short of an idle BullMQ worker's
 * 5 s wake-up (turn-cost-budget.ts, scheduledTurn).
 */
const scheduleChat = 9006;
const scheduleLeadMs = 1500;

describe('what one turn costs (test/budgets/turn-cost-budget.ts)', () => {
  let pgServer: PostgresServer;
  let redisServer: RedisServer;
  let system: TestSystem;
  let probe: CostProbe;
  let redis: Redis;
  let hookConversation: number;
  let db: DbClient;
  let scheduleRedis: Redis;
  let schedules: ScheduleQueue;

  beforeAll(async () => {
    let counting: Awaited<ReturnType<typeof startCountingPostgres>>;
    [counting, redisServer] = await Promise.all([startCountingPostgres(), startRedis()]);
    pgServer = counting.server;
    const { databaseUrl, pg } = counting;
    // Production's defaults where they change the count: streaming and status reactions on. An instant turn
    // leaves no reaction (STATUS_REACTION_AFTER_MS, 1 s by default): 30 s here, so that a loaded machine never
    // makes a measured turn a slow one (a turn past the delay adds its 👀 and ✅: two calls).
    const env = { ...quiet, STREAMING: 'on', STATUS_REACTIONS: 'on', STATUS_REACTION_AFTER_MS: '30000', MODEL_CONTEXT_TOKENS: String(contextTokens) };
    hookConversation = await createConversation(databaseUrl, { platform: 'telegram', accountId: '123456', chatId: String(hookChat), threadId: '', userScope: '' });
    const HOOKS_FILE = writeHooksFile({ ci: { secret: hookSecret, conversationId: hookConversation, prompt: 'CI says: {{body}}' } });
    system = await TestSystem.start({ databaseUrl, redisUrl: redisServer.url, workerEnv: env, gatewayEnv: { ...quiet, HOOKS_FILE } });
    await system.setModelScript({ rules: [{ match: 'slow', delayMs: 60_000 }] });
    redis = new Redis(redisServer.url);
    probe = { pg, redis, system };
    db = createDbClient(databaseUrl, { max: 1 });
    scheduleRedis = new Redis(redisServer.url);
    schedules = createScheduleQueue(scheduleRedis, system.redisPrefix);
  }, 60_000);
  afterAll(async () => {
    await schedules?.close();
    scheduleRedis?.disconnect();
    await db?.close();
    redis?.disconnect();
    await probe?.pg.end();
    await system?.close();
    await Promise.allSettled([pgServer?.destroy(), redisServer?.destroy()]);
  });

  /** A conversation that already had a turn, so a first message's one-off work (the conversation row, its session) is not counted. */
  async function warmChat(chatId: number, texts = ['hello there']): Promise<void> {
    for (const [i, text] of texts.entries()) {
      await sendText(system, chatId, text);
      await system.waitForTelegram(chatId, i + 1);
    }
    await waitForIdle(system, [chatId]);
  }

  it('an ordinary turn', async () => {
    await warmChat(9001);
    const counts = await measure(probe, async () => {
      await sendText(system, 9001, 'what a nice day');
      await system.waitForTelegram(9001, 2);
    });
    expectWithinBudget('ordinaryTurn', turnCostBudget.ordinaryTurn, counts);
  });

  it('a turn interrupted by the next message', async () => {
    await warmChat(9002);
    const counts = await measure(probe, async () => {
      await sendText(system, 9002, 'a slow one');
      await waitForRequestFor(system, 'a slow one', 'any');
      await sendText(system, 9002, 'never mind');
      await system.waitForTelegram(9002, 2);
    });
    expectWithinBudget('interruptedTurn', turnCostBudget.interruptedTurn, counts);
  });

  it('a command (/status)', async () => {
    await warmChat(9003);
    const counts = await measure(probe, async () => {
      await sendText(system, 9003, '/status');
      await system.waitForTelegram(9003, 2);
    });
    expectWithinBudget('statusCommand', turnCostBudget.statusCommand, counts);
  });

  it('a compression (/compact of four long exchanges)', async () => {
    const long = (i: number) => `story ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(40)}`;
    await warmChat(9004, [long(1), long(2), long(3), long(4)]);
    const counts = await measure(probe, async () => {
      await sendText(system, 9004, '/compact');
      const replies = await system.waitForTelegram(9004, 5);
      expect(replies.at(-1)?.text).toMatch(/^Done: \d+ older messages are now a summary\.$/);
    });
    expectWithinBudget('compactCommand', turnCostBudget.compactCommand, counts);
  });

  it('a triggered turn (POST /hooks/{name})', async () => {
    // The chat's own message first: the hook's conversation is then one that already had a turn, as in the cases above.
    await warmChat(hookChat);
    const [warm] = await system.sql<{ n: number }[]>`select count(*)::int as n from inbound_events where conversation_id = ${hookConversation}`;
    expect(warm?.n).toBe(1);
    const counts = await measure(probe, async () => {
      const call = await callHook(system.gateway.url, { name: 'ci', secret: hookSecret, body: '{"build":"failed"}', deliveryId: 'budget-1' });
      expect(call).toEqual({ status: 200, body: { ok: true, outcome: 'accepted' } });
      const replies = await system.waitForTelegram(hookChat, 2);
      expect(replies.at(-1)?.text).toBe('echo: CI says: {"build":"failed"}');
    });
    expectWithinBudget('triggeredTurn', turnCostBudget.triggeredTurn, counts);
  });

  it('a scheduled turn (one occurrence of a one-off schedule)', async () => {
    await warmChat(scheduleChat);
    const [conversation] = await system.sql<{ id: string }[]>`select id from conversations where chat_id = ${String(scheduleChat)}`;
    // Made through the schedule door before the measurement (its insert and its delayed job are the making's
    // cost, not the occurrence's); it falls due after the counters are zeroed.
    const at = new Date(Date.now() + scheduleLeadMs);
    const made = await makeSchedule(
      { db: db.db, schedules, log: createLogger('budget', 'silent') },
      { conversationId: Number(conversation?.id), spec: { prompt: 'time to stretch', at: at.toISOString() }, createdBy: 'admin:budget', maxActive: null },
    );
    expect(made.kind).toBe('created');
    const counts = await measure(probe, async () => {
      expect(Date.now(), 'the counters were zeroed after the occurrence fell due').toBeLessThan(at.getTime());
      const replies = await system.waitForTelegram(scheduleChat, 2);
      expect(replies.at(-1)?.text).toBe('echo: time to stretch');
    });
    expectWithinBudget('scheduledTurn', turnCostBudget.scheduledTurn, counts);
  });
});
