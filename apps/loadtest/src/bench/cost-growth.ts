import { needsCompression, resolveConversationKey } from '@switchboard/core';
import { createDbClient, loadTurnState, type Database } from '@switchboard/db';
import { createLatencyRecorder, type LatencySummary } from '../latency-histogram.ts';
import { benchBotToken, type SystemUnderTest } from './system-under-test.ts';
import { measureTurnOverhead } from './turn-scenarios.ts';

export interface CostPoint {
  label: string;
  overhead: LatencySummary;
  endToEnd: LatencySummary;
  /** The preflight compression check alone (history cases only). */
  preflight?: LatencySummary;
}

// Seeded rows carry a small token estimate so a 10,000-message session stays under the compression threshold:
// compression is a separate figure, and here it would replace the history being measured.
const seededTokensPerMessage = 6;
const botId = benchBotToken.split(':')[0] as string;

/**
 * Gives a Telegram private chat a stored history of `messages` rows, as if it
 * had talked that long: the conversation, its session and the messages, written
 * straight into the database so seeding 10,000 turns takes a second, not an hour.
 */
export async function seedHistory(db: Database, chatId: number, messages: number): Promise<number> {
  const key = resolveConversationKey({ platform: 'telegram', accountId: botId, chatId: String(chatId), threadId: '', userScope: '' });
  return db.$client.begin(async (tx) => {
    const [conversation] = await tx<{ id: string }[]>`
      insert into conversations (key, platform, account_id, chat_id) values (${key}, 'telegram', ${botId}, ${String(chatId)}) returning id`;
    const [session] = await tx<{ id: string }[]>`
      insert into sessions (conversation_id, token_estimate, message_count, last_seq)
      values (${conversation?.id ?? 0}, ${messages * seededTokensPerMessage}, ${messages}, ${messages}) returning id`;
    await tx`update conversations set current_session_id = ${session?.id ?? 0} where id = ${conversation?.id ?? 0}`;
    await tx`
      insert into messages (session_id, seq, role, content, tokens)
      select ${session?.id ?? 0}, g, case when g % 2 = 1 then 'user' else 'assistant' end, 'h' || g, ${seededTokensPerMessage}
      from generate_series(1, ${messages}::int) g`;
    return Number(conversation?.id);
  });
}

/**
 * Issue 4's preflight check, timed in this process on the worker's own code:
 * the state read that brings the session's running token estimate
 * (`loadTurnState`) and the decision (`needsCompression`). Nothing in it
 * should grow with the history. The conversations take turns, round after
 * round, so drift on a shared machine (other work, autovacuum) falls on all
 * of them alike instead of on whichever was measured last.
 */
async function measurePreflight(db: Database, conversationIds: number[], rounds: number): Promise<LatencySummary[]> {
  const recorders = conversationIds.map(() => createLatencyRecorder());
  for (let round = 0; round < rounds + 20; round++) {
    for (const [i, conversationId] of conversationIds.entries()) {
      const startedAt = performance.now();
      const state = await loadTurnState(db, conversationId, 64);
      needsCompression({ fixedTokens: 200, sessionTokens: state?.session?.tokenEstimate ?? 0, inputTokens: 10, contextTokens: 128_000, threshold: 0.8 });
      if (round >= 20) recorders[i]?.record(performance.now() - startedAt);
    }
  }
  return recorders.map((r) => r.summary());
}

/** Tops the conversations table up to `total` rows with idle ones, in one INSERT … SELECT generate_series. */
export async function seedConversations(db: Database, total: number): Promise<number> {
  const sql = db.$client;
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from conversations`;
  const existing = row?.n ?? 0;
  if (existing < total) {
    await sql`
      insert into conversations (key, platform, account_id, chat_id)
      select 'telegram:filler:' || g, 'telegram', 'filler', g::text
      from generate_series(${existing + 1}::int, ${total}::int) g`;
    // What autovacuum would do soon after a bulk load; without it the planner guesses from stale statistics.
    await sql`analyze conversations`;
  }
  return Math.max(existing, total);
}

/**
 * Per-turn overhead (end to end minus model time, sequential turns, instant
 * model) in chats with 10, 1,000 and 10,000 stored messages, then with 1,000
 * and 1,000,000 conversations in the database.
 */
export async function measureCostGrowth(
  sut: SystemUnderTest,
  options: { turns: number; historySizes: number[]; conversationCounts: number[]; log: (line: string) => void },
): Promise<{ history: CostPoint[]; conversations: CostPoint[] }> {
  const { db, close } = createDbClient(sut.databaseUrl, { max: 1, applicationName: 'switchboard-bench' });
  try {
    const history: CostPoint[] = [];
    const seeded: number[] = [];
    for (const [i, size] of options.historySizes.entries()) {
      const chatId = 930_000 + i;
      options.log(`bench: cost growth, ${size} messages of history`);
      seeded.push(await seedHistory(db, chatId, size));
      const result = await measureTurnOverhead(sut, options.turns, { warmup: 5, chatId });
      history.push({ label: `${size.toLocaleString('en-US')} messages of history`, ...result });
    }
    options.log('bench: preflight check per history length');
    const preflight = await measurePreflight(db, seeded, 500);
    history.forEach((point, i) => (point.preflight = preflight[i]));
    const conversations: CostPoint[] = [];
    for (const [i, count] of options.conversationCounts.entries()) {
      const startedAt = performance.now();
      const total = await seedConversations(db, count);
      options.log(`bench: cost growth, ${total} conversations in the database (seeded in ${((performance.now() - startedAt) / 1000).toFixed(1)} s)`);
      const result = await measureTurnOverhead(sut, options.turns, { warmup: 5, chatId: 940_000 + i });
      conversations.push({ label: `${total.toLocaleString('en-US')} conversations in the database`, ...result });
    }
    return { history, conversations };
  } finally {
    await close(5);
  }
}
