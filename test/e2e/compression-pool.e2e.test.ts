import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateMessageTokens } from '@switchboard/agent';
import { adminRequest, adminTokenEnv, aliceToken } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';
import { chatPrefix, lastUserText, modelRequests, waitForCondition, type ModelRequest } from '../support/turn-helpers.ts';

/**
 * More concurrent compressions than the worker has Postgres connections
 * (issue 16, defect 6; docs/compression.md, "The pool"). Each compression
 * holds a pooled connection for its advisory lock through the summariser
 * call and needs another one for its reads and its commit, so before
 * COMPRESSION_CONCURRENCY a worker whose pool was all held by locks waited
 * for a connection forever. Here a worker with a 4-connection pool compresses
 * 24 conversations at once (more than the 20 connections the pool used to be
 * fixed at, so the old worker hangs here too), with a slow summariser: all
 * complete, never more than COMPRESSION_CONCURRENCY summaries at a time, and
 * the worker still answers.
 */

const poolSize = 4;
const compressionConcurrency = 2;
const conversations = 24;
const firstChat = 6001;
const transcriptPrefix = 'Transcript to summarise:';
const summaryText = 'SUMMARY: long pangrams, each echoed.';
const filler = 'the quick brown fox jumps over the lazy dog '.repeat(14).trim();
const long = (chat: number, n: number) => `${chatPrefix(chat)} m${String(n).padStart(2, '0')}: ${filler}`;

describe('compressions never exhaust the worker pool', () => {
  let system: TestSystem;
  const chats = Array.from({ length: conversations }, (_, i) => firstChat + i);

  beforeAll(async () => {
    system = await TestSystem.start({
      workerEnv: { MODEL_CONTEXT_TOKENS: '1900', WORKER_DB_POOL_SIZE: String(poolSize), COMPRESSION_CONCURRENCY: String(compressionConcurrency) },
      gatewayEnv: { ADMIN_TOKEN: adminTokenEnv },
    });
    await system.setModelScript({ rules: [{ match: transcriptPrefix, reply: summaryText, delayMs: 600 }] });
  }, 60_000);
  afterAll(async () => {
    await system?.close();
  });

  /** One short exchange through the gateway creates the conversation and its session; then 8 long messages are written straight into it. */
  async function seedChat(chat: number): Promise<number> {
    expect((await system.sendTelegram({ chatId: chat, text: `${chatPrefix(chat)} hello` })).status).toBe(200);
    await system.waitForTelegram(chat, 1);
    const [row] = await system.sql<{ id: number; session: number }[]>`
      select id::int as id, current_session_id::int as session from conversations where chat_id = ${String(chat)}`;
    if (!row) throw new Error(`no conversation for chat ${chat}`);
    const seeded = Array.from({ length: 8 }, (_, i) => {
      const content = i % 2 === 0 ? long(chat, i) : `echo: ${long(chat, i - 1)}`;
      return { role: i % 2 === 0 ? 'user' : 'assistant', content, tokens: estimateMessageTokens(content) };
    });
    await system.sql.begin(async (tx) => {
      const [session] = await tx<{ last_seq: number }[]>`select last_seq from sessions where id = ${row.session} for update`;
      const base = session?.last_seq ?? 0;
      for (const [i, m] of seeded.entries()) {
        await tx`insert into messages (session_id, seq, role, content, tokens) values (${row.session}, ${base + i + 1}, ${m.role}, ${m.content}, ${m.tokens})`;
      }
      const tokens = seeded.reduce((sum, m) => sum + m.tokens, 0);
      await tx`update sessions set last_seq = last_seq + ${seeded.length}, message_count = message_count + ${seeded.length}, token_estimate = token_estimate + ${tokens} where id = ${row.session}`;
    });
    return row.id;
  }

  /** The most summarisation requests the model had in flight at once. */
  function mostInFlight(requests: ModelRequest[]): number {
    const edges = requests.flatMap((r) => [
      { at: r.receivedAt, step: 1 },
      { at: r.finishedAt ?? r.abortedAt ?? Number.POSITIVE_INFINITY, step: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.step - b.step);
    let now = 0;
    let most = 0;
    for (const edge of edges) {
      now += edge.step;
      most = Math.max(most, now);
    }
    return most;
  }

  it(`${conversations} compressions at once on a ${poolSize}-connection worker pool all complete, and the worker still answers`, async () => {
    const ids = await Promise.all(chats.map(seedChat));

    const answers = await Promise.all(ids.map((id) => adminRequest(system.gateway.url, 'POST', `/admin/conversations/${id}/compact`, { token: aliceToken })));
    for (const answer of answers) expect(answer.status).toBe(202);

    await waitForCondition(
      `all ${conversations} conversations compressed, each result audited`,
      async () => {
        const [row] = await system.sql<{ compressed: number; audited: number }[]>`
          select count(*)::int as compressed,
            (select count(*)::int from audit_log where action = 'conversation.compact.result') as audited
          from conversations c join sessions s on s.id = c.current_session_id
          where c.id = any(${ids}) and s.parent_session_id is not null`;
        // The result's audit row is written just after the compression commits: wait for both, or the last may be read too early.
        return row?.compressed === conversations && row.audited === conversations;
      },
      90_000,
    );
    const results = await system.sql<{ result: string }[]>`select result from audit_log where action = 'conversation.compact.result'`;
    expect(results.map((r) => r.result)).toEqual(Array.from({ length: conversations }, () => 'ok'));

    const summaries = (await modelRequests(system)).filter((r) => lastUserText(r).startsWith(transcriptPrefix));
    expect(summaries).toHaveLength(conversations);
    // They overlapped, up to the limit and never past it.
    expect(mostInFlight(summaries)).toBe(compressionConcurrency);

    // The pool really is that small, and nothing is stuck: the worker answers on the child session.
    const [connections] = await system.sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where application_name = 'switchboard-worker' and datname = current_database()`;
    expect(connections?.n).toBeLessThanOrEqual(poolSize);
    const chat = chats[0] as number;
    expect((await system.sendTelegram({ chatId: chat, text: long(chat, 9) })).status).toBe(200);
    expect((await system.waitForTelegram(chat, 2)).at(-1)?.text).toBe(`echo: ${long(chat, 9)}`);
  }, 150_000);
});
