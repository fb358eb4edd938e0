import postgres from 'postgres';
import { estimateMessageTokens } from '@switchboard/agent';
import { resolveConversationKey } from '@switchboard/core';
import { defaultTranscriptPath, loadTranscripts } from '../transcripts.ts';
import { benchBotToken, getJson, postJson, type SystemUnderTest } from './system-under-test.ts';

/** One /compact of a seeded session, as the worker's own histograms and the database saw it. */
export interface CompressionSample {
  /** compressConversation from start to return minus the summariser call (switchboard_compression_gateway_seconds). */
  gatewayMs: number;
  /** The summariser call: request out, the model's answer back (switchboard_compression_summariser_seconds). */
  summariserMs: number;
  /** Webhook sent → the /compact reply recorded by the platform: queue, lease, compression, outbox, delivery. */
  endToEndMs: number;
  messages: number;
  tokens: number;
  summarisedMessages: number;
  summarisedTokens: number;
  keptMessages: number;
  keptTokens: number;
  summaryTokens: number;
}

export interface CompressionCost {
  samples: CompressionSample[];
  /** The worker's first compression, left out of `samples`: it pays for compiling the path (JIT) and growing the heap. */
  cold: CompressionSample | undefined;
  /** The seeded session every sample starts from. */
  targetTokens: number;
}

interface SeedRow {
  role: 'user' | 'assistant';
  content: string;
  tokens: number;
}

const botId = benchBotToken.split(':')[0] as string;
const compactReply = /^Done: (\d+) older messages are now a summary\.$/;
/** What the simulated summariser answers: instant, so the summariser's figure is transport, not thinking. */
const scriptedSummary = [
  'The user and the assistant talked about many topics: football and the NFL, music, films and their directors, space and NASA,',
  'animals, books, politics and the history of several inventions. The user asked about trivia they had read (for example that',
  'a football game lasts about eleven minutes of actual play, and that the Earth is the only planet not named after a god) and',
  'the assistant answered with related facts, opinions and follow-up questions. No tasks are open; no decisions were made.',
].join(' ');

/**
 * Topical-Chat lines, alternately user and assistant, until they hold
 * `targetTokens` o200k tokens as the worker counts them (each row's `tokens`
 * is what `estimateMessageTokens` gives, as if the worker had stored it).
 */
export function buildSeedRows(targetTokens: number): SeedRow[] {
  const conversations = loadTranscripts(defaultTranscriptPath);
  const rows: SeedRow[] = [];
  let total = 0;
  // Tags like `[c12.3] ` are the load tester's, not anybody's words.
  const untag = (text: string) => text.replace(/^\[c\d+\.\d+\] /, '');
  for (;;) {
    for (const conversation of conversations) {
      for (const turn of conversation.turns) {
        for (const [role, text] of [['user', turn.human], ['assistant', turn.reply]] as const) {
          const content = untag(text);
          const tokens = estimateMessageTokens(content);
          rows.push({ role, content, tokens });
          total += tokens;
          // Stop on an assistant row, so the session ends where a turn ends.
          if (total >= targetTokens && role === 'assistant') return rows;
        }
      }
    }
  }
}

/** A Telegram private chat whose one active session holds `rows`, with token_estimate, message_count and last_seq to match. */
async function seedSession(sql: postgres.Sql, chatId: number, rows: SeedRow[]): Promise<number> {
  const key = resolveConversationKey({ platform: 'telegram', accountId: botId, chatId: String(chatId), threadId: '', userScope: '' });
  const tokens = rows.reduce((sum, row) => sum + row.tokens, 0);
  return sql.begin(async (tx) => {
    const [conversation] = await tx<{ id: string }[]>`
      insert into conversations (key, platform, account_id, chat_id) values (${key}, 'telegram', ${botId}, ${String(chatId)}) returning id`;
    const conversationId = conversation?.id ?? '0';
    const [session] = await tx<{ id: string }[]>`
      insert into sessions (conversation_id, token_estimate, message_count, last_seq)
      values (${conversationId}, ${tokens}, ${rows.length}, ${rows.length}) returning id`;
    const sessionId = session?.id ?? '0';
    await tx`update conversations set current_session_id = ${sessionId} where id = ${conversationId}`;
    // One statement of arrays: thousands of rows without hitting the 65,535 bind-parameter limit.
    await tx`
      insert into messages (session_id, seq, role, content, tokens)
      select ${sessionId}, r.seq, r.role, r.content, r.tokens
      from unnest(${rows.map((_, i) => i + 1)}::int[], ${rows.map((r) => r.role)}::text[], ${rows.map((r) => r.content)}::text[], ${rows.map((r) => r.tokens)}::int[])
        as r(seq, role, content, tokens)`;
    return Number(sessionId);
  });
}

/** Sum and count of one histogram over every worker's /metrics, for the series whose labels contain `labels`. */
async function readHistogram(workerUrls: readonly string[], name: string, labels = ''): Promise<{ sum: number; count: number }> {
  const total = { sum: 0, count: 0 };
  for (const url of workerUrls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const line of text.split('\n')) {
      const match = /^(\w+?)_(sum|count)(?:\{([^}]*)\})? (\S+)$/.exec(line);
      if (!match || match[1] !== name || !(match[3] ?? '').includes(labels)) continue;
      total[match[2] as 'sum' | 'count'] += Number(match[4]);
    }
  }
  return total;
}

async function readCompressionHistograms(workerUrls: readonly string[]) {
  const [gateway, summariser] = await Promise.all([
    readHistogram(workerUrls, 'switchboard_compression_gateway_seconds'),
    readHistogram(workerUrls, 'switchboard_compression_summariser_seconds', 'outcome="ok"'),
  ]);
  return { gateway, summariser };
}

/**
 * Issue 4: "compression of a 200k-token session dominated by the model call
 * (gateway's own work under 100 ms)". Each sample seeds a fresh Telegram chat
 * whose session holds ~`targetTokens` tokens of Topical-Chat lines, sends
 * `/compact` through the simulator and waits for the reply. The worker's own
 * histograms (read before and after; the sample is the delta) split the
 * compression into the gateway's work and the summariser call; the child
 * session in the database gives the sizes. The simulated model answers the
 * summary at once, so the summariser figure is the request's transport.
 * The first `warmup` compressions (default 1) are run and reported apart.
 */
export async function measureCompressionCost(
  sut: Pick<SystemUnderTest, 'simUrl' | 'databaseUrl' | 'workerUrls'>,
  options: { samples: number; warmup?: number; targetTokens?: number; firstChatId?: number; log?: (line: string) => void },
): Promise<CompressionCost> {
  const targetTokens = options.targetTokens ?? 200_000;
  const rows = buildSeedRows(targetTokens);
  const sql = postgres(sut.databaseUrl, { max: 1, onnotice: () => undefined });
  await postJson(`${sut.simUrl}/control/model/script`, { rules: [{ match: 'Transcript to summarise:', reply: scriptedSummary }] });
  const warmup = options.warmup ?? 1;
  const samples: CompressionSample[] = [];
  try {
    for (let i = 0; i < warmup + options.samples; i++) {
      const chatId = (options.firstChatId ?? 950_000) + i;
      const sessionId = await seedSession(sql, chatId, rows);
      // A real 200k-token session was written over weeks and long since vacuumed; without this, autovacuum
      // wakes up for the fresh rows in the middle of the compression and competes with it for CPU.
      await sql`vacuum (analyze) messages`;
      const before = await readCompressionHistograms(sut.workerUrls);
      const sentAt = Date.now();
      const answer = await postJson<{ status: number }>(`${sut.simUrl}/control/telegram/updates`, { chat: { id: chatId, type: 'private' }, from: { id: chatId }, text: '/compact' });
      if (answer.status !== 200) throw new Error(`gateway answered ${answer.status} to /compact`);
      const [reply] = await getJson<{ text: string; sentAt: number }[]>(`${sut.simUrl}/control/telegram/wait?chat_id=${chatId}&count=1&timeout_ms=120000`);
      const after = await readCompressionHistograms(sut.workerUrls);
      const summarised = Number(compactReply.exec(reply?.text ?? '')?.[1] ?? NaN);
      if (!Number.isFinite(summarised)) throw new Error(`/compact answered "${reply?.text ?? ''}", not a compression`);
      if (after.gateway.count - before.gateway.count !== 1) throw new Error('the worker did not record exactly one compression');
      const [child] = await sql<{ message_count: number; token_estimate: number; summary_tokens: number }[]>`
        select s.message_count, s.token_estimate, m.tokens as summary_tokens
        from sessions s join messages m on m.session_id = s.id and m.seq = 1
        where s.parent_session_id = ${sessionId}`;
      if (!child) throw new Error(`no child session of ${sessionId} after /compact`);
      const tokens = rows.reduce((sum, row) => sum + row.tokens, 0);
      const keptTokens = child.token_estimate - child.summary_tokens;
      const sample: CompressionSample = {
        gatewayMs: (after.gateway.sum - before.gateway.sum) * 1000,
        summariserMs: (after.summariser.sum - before.summariser.sum) * 1000,
        endToEndMs: (reply?.sentAt ?? sentAt) - sentAt,
        messages: rows.length,
        tokens,
        summarisedMessages: summarised,
        summarisedTokens: tokens - keptTokens,
        keptMessages: child.message_count - 1,
        keptTokens,
        summaryTokens: child.summary_tokens,
      };
      options.log?.(
        `bench: compression ${i < warmup ? 'warm-up' : `${i + 1 - warmup}/${options.samples}`}: gateway ${sample.gatewayMs.toFixed(1)} ms, summariser ${sample.summariserMs.toFixed(1)} ms, end to end ${sample.endToEndMs} ms (${sample.summarisedMessages} messages summarised, ${sample.keptMessages} kept)`,
      );
      samples.push(sample);
    }
    return { samples: samples.slice(warmup), cold: warmup > 0 ? samples[0] : undefined, targetTokens };
  } finally {
    await postJson(`${sut.simUrl}/control/model/script`, {});
    await sql.end({ timeout: 5 });
  }
}
