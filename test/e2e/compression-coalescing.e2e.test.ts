import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, createTurnQueue, type TurnQueue , type RedisClient } from '@switchboard/queue';
import { adminRequest, adminTokenEnv, aliceToken } from '../support/admin-client.ts';
import { conversationState } from '../support/restart-helpers.ts';
import { smallContextEnv } from '../support/context-sizes.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';
import { chatPrefix, lastUserText, modelRequests, waitForCondition, waitForIdle } from '../support/turn-helpers.ts';

/**
 * Compaction requests name the session they were meant for, and coalesce
 * (issue 16, defect 5; docs/compression.md, "Requests"): eight concurrent
 * operator compactions of one conversation give one summary and seven
 * no-ops that say so; `/compact` twice gives one summary and "nothing to do".
 *
 * Sizes as in compression.e2e (test/support/context-sizes.ts): a 1,900-token context, each long message and
 * its echo ~138 tokens, so five messages stay under the threshold (no
 * automatic compression) and the 380-token kept tail is the last message
 * and its echo; the summary is ~140 tokens.
 */

const transcriptPrefix = 'Transcript to summarise:';
const filler = 'the quick brown fox jumps over the lazy dog '.repeat(14).trim();
/**
 * As long as a message (~130 tokens): with the kept tail it no longer fits the
 * keep budget, so a second compaction would summarise the summary alone
 * (what issue 16 saw: a summary of a summary) rather than find nothing to do.
 */
const summaryText = `SUMMARY: the user sent long pangrams, each answered with an echo: ${filler}`;
const long = (chat: number, n: number) => `${chatPrefix(chat)} m${String(n).padStart(2, '0')}: ${filler}`;
const chats = { operator: 5001, twice: 5002 };

const script = {
  // Slow enough that the eight operator requests overlap the one compression that runs.
  rules: [{ match: transcriptPrefix, reply: summaryText, delayMs: 1000 }],
};

interface AuditRow {
  result: string;
  detail: { jobId: string | null; outcome: string; changed: boolean; sessionId?: number; currentSessionId?: number; childSessionId?: number };
}

describe('compaction requests coalesce', () => {
  let system: TestSystem;
  let connection: RedisClient;
  let queue: TurnQueue;
  const replyCounts = new Map<number, number>();

  beforeAll(async () => {
    system = await TestSystem.start({ workerEnv: { ...smallContextEnv }, gatewayEnv: { ADMIN_TOKEN: adminTokenEnv } });
    await system.setModelScript(script);
    connection = createRedisConnection(redisUrl(), 'producer');
    queue = createTurnQueue(connection, system.redisPrefix);
  }, 60_000);
  afterAll(async () => {
    await queue?.close();
    connection?.disconnect();
    await system?.close();
  });

  async function say(chat: number, text: string): Promise<string | undefined> {
    const { status } = await system.sendTelegram({ chatId: chat, text });
    expect(status).toBe(200);
    const count = (replyCounts.get(chat) ?? 0) + 1;
    replyCounts.set(chat, count);
    return (await system.waitForTelegram(chat, count)).at(-1)?.text;
  }

  async function converse(chat: number, from: number, to: number): Promise<void> {
    for (let n = from; n <= to; n++) expect(await say(chat, long(chat, n))).toBe(`echo: ${long(chat, n)}`);
  }

  async function sessionsOf(conversationId: number) {
    return system.sql<{ id: number; parent: number | null; status: string }[]>`
      select id::int as id, parent_session_id::int as parent, status from sessions where conversation_id = ${conversationId} order by id`;
  }

  /**
   * Every summarisation request so far, of any chat: a summary of a summary
   * no longer quotes the chat's messages, so it cannot be told apart by
   * them. The tests of this file run one after another and compare counts.
   */
  async function summarisationCount(): Promise<number> {
    return (await modelRequests(system)).filter((r) => lastUserText(r).startsWith(transcriptPrefix)).length;
  }

  async function compactionResults(conversationId: number): Promise<AuditRow[]> {
    return system.sql<AuditRow[]>`
      select result, detail from audit_log
      where action = 'conversation.compact.result' and target = ${`conversation:${conversationId}`} order by id`;
  }

  it('eight concurrent operator compactions: one summary, one child, seven no-ops that say the session moved on', async () => {
    const chat = chats.operator;
    await converse(chat, 1, 5);
    await waitForIdle(system, [chat]);
    const conversation = await conversationState(system, chat);
    const rootId = conversation.current_session_id as number; // set by the turns above
    const summariesBefore = await summarisationCount();

    const answers = await Promise.all(
      Array.from({ length: 8 }, () => adminRequest<{ ok: boolean; jobId: string; sessionId: number }>(system.gateway.url, 'POST', `/admin/conversations/${conversation.id}/compact`, { token: aliceToken })),
    );
    for (const answer of answers) expect(answer).toMatchObject({ status: 202, body: { ok: true, sessionId: rootId } });
    await waitForCondition('eight compaction results', async () => (await compactionResults(conversation.id)).length === 8, 60_000);

    const results = await compactionResults(conversation.id);
    expect(results.map((r) => r.result).sort()).toEqual(['SESSION_SUPERSEDED', 'SESSION_SUPERSEDED', 'SESSION_SUPERSEDED', 'SESSION_SUPERSEDED', 'SESSION_SUPERSEDED', 'SESSION_SUPERSEDED', 'SESSION_SUPERSEDED', 'ok']);
    const done = results.find((r) => r.result === 'ok')!.detail;
    expect(done).toMatchObject({ outcome: 'compressed', changed: true, sessionId: rootId, currentSessionId: rootId });
    for (const r of results.filter((x) => x.result !== 'ok')) expect(r.detail).toMatchObject({ outcome: 'superseded', changed: false, sessionId: rootId });

    expect((await summarisationCount()) - summariesBefore).toBe(1);
    expect(await sessionsOf(conversation.id)).toEqual([
      { id: rootId, parent: null, status: 'compressed' },
      { id: done.childSessionId, parent: rootId, status: 'active' },
    ]);
    expect((await conversationState(system, chat)).current_session_id).toBe(done.childSessionId);

    // The jobs succeeded (a no-op is not a failure to retry), and each result says what it did.
    const jobs = await Promise.all(answers.map((a) => queue.getJob(a.body.jobId)));
    const states = await Promise.all(jobs.map((job) => job?.getState()));
    expect(states).toEqual(Array.from({ length: 8 }, () => 'completed'));
    const returned = jobs.map((job) => (job?.returnvalue as { outcome: string }).outcome).sort();
    expect(returned).toEqual(['compressed', ...Array.from({ length: 7 }, () => 'superseded')]);

    // The conversation goes on on the child.
    await converse(chat, 6, 6);
    const [stored] = await system.sql<{ session_id: number }[]>`select session_id::int as session_id from messages where content = ${long(chat, 6)}`;
    expect(stored?.session_id).toBe(done.childSessionId);
  }, 90_000);

  it('/compact twice: one summary; the second says there is nothing to do; later, with enough new, /compact works again', async () => {
    const chat = chats.twice;
    await converse(chat, 1, 5);
    const conversation = await conversationState(system, chat);
    const summariesBefore = await summarisationCount();

    // Both typed before the first is answered: handled in order, the second after the first's commit.
    for (const text of ['/compact', '/compact']) expect((await system.sendTelegram({ chatId: chat, text })).status).toBe(200);
    const replies = (await system.waitForTelegram(chat, 7)).slice(5).map((m) => m.text);
    replyCounts.set(chat, 7);
    expect(replies[0]).toMatch(/^Done: \d+ older messages are now a summary\.$/);
    expect(replies[1]).toBe('Nothing to do: the conversation was just compressed, and too little is new since to summarise again.');
    expect((await summarisationCount()) - summariesBefore).toBe(1);
    expect(await sessionsOf(conversation.id)).toHaveLength(2);

    expect(await say(chat, '/compact')).toMatch(/^Nothing to do: /);
    expect((await summarisationCount()) - summariesBefore).toBe(1);

    // Two more exchanges: enough that a summary gains something again.
    await converse(chat, 6, 7);
    expect(await say(chat, '/compact')).toMatch(/^Done: \d+ older messages are now a summary\.$/);
    expect((await summarisationCount()) - summariesBefore).toBe(2);
    expect(await sessionsOf(conversation.id)).toHaveLength(3);
  }, 90_000);
});
