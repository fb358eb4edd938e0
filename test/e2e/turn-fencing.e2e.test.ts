import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  conversationState,
  fastRestartEnv,
  stopWorker,
  suspendedNoticePrefix,
  turnsOf,
  waitForConversation,
  waitForRunningTurn,
} from '../support/restart-helpers.ts';
import { smallContextEnv } from '../support/context-sizes.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';
import { armTelegramFault, lastUserText, modelRequests, sentTo, waitForCondition, waitForIdle, waitForModelRequest } from '../support/turn-helpers.ts';

/**
 * Issue 16, defects 2 and 4, through real worker processes: a worker that
 * loses the conversation's lease mid-turn never answers (the fenced commit),
 * and a worker that dies during preflight compression is counted like any
 * other cut-off turn, so a conversation that kills its worker there is
 * suspended instead of looping for ever.
 */

const slowStory = 'once upon a time ';

describe('a lease lost mid-turn (two worker processes)', () => {
  const chat = 7201;
  const first = 'c7201:first';
  const second = 'c7201:second';
  let system: TestSystem;
  let redis: Redis;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 2, workerProcesses: true, workerEnv: fastRestartEnv });
    // The first request for `first` streams for about two seconds; any later one is an instant echo.
    await system.setModelScript({ default: { type: 'echo', prefix: 'echo: ' }, rules: [
      { matchRegex: `^${first}$`, replyRepeat: { text: slowStory, count: 200 }, chunkDelayMs: 10, times: 1 },
    ] });
    redis = new Redis(redisUrl());
  }, 90_000);
  afterAll(async () => {
    redis?.disconnect();
    await system?.close();
  });

  it('lets the new holder answer once; the old holder streams on, commits nothing and sends nothing', { timeout: 60_000 }, async () => {
    // Queue mode: the second message waits for its own turn instead of interrupting the first.
    await system.sendTelegram({ chatId: chat, text: '/busy queue' });
    await system.waitForTelegram(chat, 1);
    await system.sendTelegram({ chatId: chat, text: first });
    const { request: stale } = await waitForRunningTurn(system, chat, first);
    const { id: conversationId } = await conversationState(system, chat);

    // A Redis failover without the key: the lease is gone while its holder still streams.
    expect(await redis.del(`${system.redisPrefix}:lease:conversation:${conversationId}`)).toBe(1);
    await system.sendTelegram({ chatId: chat, text: second });

    // The stale holder's stream runs to its end (its commit comes after the new holder's work).
    await waitForModelRequest(system, (r) => r.id === stale.id, { state: 'finished', timeoutMs: 20_000, what: 'the stale holder’s stream' });
    await waitForIdle(system, [chat]);
    await waitForCondition('the stale holder to try its commit', async () => (await turnsOf(system, chat)).every((t) => t.status !== 'running'));

    const replies = (await sentTo(system, chat)).map((m) => m.text);
    expect(replies.slice(1)).toEqual([`echo: ${first}`, `echo: ${second}`]);
    expect(replies.join('\n')).not.toContain(slowStory.trim());
    const requests = (await modelRequests(system)).filter((r) => lastUserText(r) === first);
    expect(requests).toHaveLength(2);

    const turns = await turnsOf(system, chat);
    expect(turns.map((t) => `${t.status}:${t.error ?? ''}:${t.cut_off}`)).toEqual(['interrupted:lease_lost:false', 'completed::false', 'completed::false']);
    const users = await system.sql<{ content: string }[]>`
      select m.content from messages m join sessions s on s.id = m.session_id where s.conversation_id = ${conversationId} and m.role = 'user' order by m.id`;
    expect(users.map((u) => u.content)).toEqual([first, second]);
    expect((await conversationState(system, chat)).restart_count).toBe(0);
  });
});

describe('a lease lost while a reply is being sent (two worker processes)', () => {
  const chat = 7203;
  let system: TestSystem;
  let redis: Redis;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 2, workerProcesses: true, workerEnv: fastRestartEnv });
    // c7204:taken streams for about a second and a half: time to take its input away while it runs.
    await system.setModelScript({ default: { type: 'echo', prefix: 'echo: ' }, rules: [{ matchRegex: '^c7204:taken$', replyRepeat: { text: slowStory, count: 150 }, chunkDelayMs: 10, times: 1 }] });
    redis = new Redis(redisUrl());
  }, 90_000);
  afterAll(async () => {
    redis?.disconnect();
    await system?.close();
  });

  it('sends every reply once and in order: the new holder leaves the row the old one is sending to it', { timeout: 60_000 }, async () => {
    await system.sendTelegram({ chatId: chat, text: '/busy queue' });
    await system.waitForTelegram(chat, 1);
    // The next reply's sendMessage is held for two seconds: its worker is mid-send when the lease vanishes.
    await armTelegramFault(system, { method: 'sendMessage', kind: 'delay', delayMs: 2000, times: 1 });
    await system.sendTelegram({ chatId: chat, text: 'c7203:first' });
    await waitForCondition('the first reply to be on its way', async () => {
      const [row] = await system.sql<{ n: number }[]>`
        select count(*)::int as n from outbox o join conversations c on c.id = o.conversation_id
        where c.chat_id = ${String(chat)} and o.text = 'echo: c7203:first' and o.status = 'pending'`;
      return (row?.n ?? 0) === 1;
    });
    const { id: conversationId } = await conversationState(system, chat);
    await redis.del(`${system.redisPrefix}:lease:conversation:${conversationId}`);
    await system.sendTelegram({ chatId: chat, text: 'c7203:second' });

    await system.waitForTelegram(chat, 3);
    await waitForIdle(system, [chat]);
    // A second copy would come from the held call (2 s from its start) or a resend: none may arrive.
    await expect(system.waitForTelegram(chat, 4, 3000)).rejects.toThrow(/expected 4 messages/);
    const sent = (await sentTo(system, chat)).map((m) => m.text);
    expect(sent.slice(1)).toEqual(['echo: c7203:first', 'echo: c7203:second']);
  });

  // Found on a Redis Cluster (TURN_REDIS=cluster SEED=2665547422 batch 5, chat 30182): a commit refused because
  // the turn's input was no longer pending left the turn's row running on a live worker, so no later turn of the
  // conversation could begin and its next messages were never answered.
  it('a commit refused while its row still runs ends the row, and the next message is answered', { timeout: 60_000 }, async () => {
    const takenChat = 7204;
    await system.sendTelegram({ chatId: takenChat, text: 'c7204:taken' });
    const { request, turnId } = await waitForRunningTurn(system, takenChat, 'c7204:taken');
    // Someone else took the input while the turn streamed (as a holder that lost the lease and still committed does).
    await system.sql`update inbound_events set status = 'done' where conversation_id = (select conversation_id from turns where id = ${turnId}) and status = 'pending'`;
    await waitForModelRequest(system, (r) => r.id === request.id, { state: 'finished', timeoutMs: 20_000, what: 'the slow answer' });
    await waitForCondition('the refused turn to end', async () => (await turnsOf(system, takenChat)).every((t) => t.status !== 'running'), 10_000);
    expect((await turnsOf(system, takenChat)).find((t) => t.id === turnId)).toMatchObject({ status: 'interrupted', error: 'lease_lost' });
    await system.sendTelegram({ chatId: takenChat, text: 'c7204:next' });
    expect((await system.waitForTelegram(takenChat, 1, 20_000)).map((m) => m.text)).toEqual(['echo: c7204:next']);
  });
});

describe('a worker killed during preflight compression (one worker process)', () => {
  const chat = 7202;
  const filler = 'the quick brown fox jumps over the lazy dog '.repeat(14).trim();
  const long = (n: number) => `c7202 m${n}: ${filler}`;
  const isSummary = (r: { body: { messages: { role: string; content?: string | null }[] } }) =>
    lastUserText(r as never).startsWith('Transcript to summarise:') && lastUserText(r as never).includes('c7202 m');
  let system: TestSystem;

  beforeAll(async () => {
    // The small context (test/support/context-sizes.ts): the 6th long message needs a compression (sizes as in compression.e2e.test.ts).
    system = await TestSystem.start({
      workers: 1,
      workerProcesses: true,
      // A short lease, so a killed worker's conversation is free again in seconds rather than half a minute.
      workerEnv: { ...fastRestartEnv, CONVERSATION_LEASE_TTL_MS: '2000', ...smallContextEnv, SUMMARY_TIMEOUT_MS: '60000', COMPRESSION_BACKOFF_MS: '0' },
    });
    // The summariser never answers: every compression is still running when the worker is killed.
    await system.setModelScript({ default: { type: 'echo', prefix: 'echo: ' }, rules: [{ matchRegex: '^Transcript to summarise:', hang: true }] });
  }, 90_000);
  afterAll(async () => {
    await system?.close();
  });

  it('counts each kill during the summary as a restart and suspends the conversation at the third', { timeout: 120_000 }, async () => {
    for (let n = 1; n <= 5; n++) {
      await system.sendTelegram({ chatId: chat, text: long(n) });
      await system.waitForTelegram(chat, n);
    }
    await system.sendTelegram({ chatId: chat, text: long(6) });
    let lastSummary = 0;
    for (let kill = 1; kill <= 3; kill++) {
      const summary = await waitForModelRequest(system, (r) => r.id > lastSummary && isSummary(r), { timeoutMs: 20_000, what: `compression ${kill}` });
      lastSummary = summary.id;
      // The turn exists while the summary is written: that is what a kill must find.
      expect((await turnsOf(system, chat)).filter((t) => t.status === 'running')).toHaveLength(1);
      await stopWorker(system, 'SIGKILL');
      await system.addWorker(true);
      if (kill < 3) await waitForConversation(system, chat, `restart ${kill} counted`, (s) => s.restart_count === kill);
    }
    const suspended = await waitForConversation(system, chat, 'suspended after three kills', (s) => s.status === 'suspended');
    expect(suspended).toMatchObject({ suspend_reason: 'restart_loop', restart_count: 0, current_session_id: null });
    const turns = await turnsOf(system, chat);
    expect(turns.filter((t) => t.cut_off).map((t) => t.error)).toEqual(['cut_off_by_restart', 'cut_off_by_restart', 'cut_off_by_restart']);
    // The held message is not tried a fourth time behind the user's back.
    expect((await modelRequests(system)).filter(isSummary)).toHaveLength(3);

    // The user's next message starts fresh, told why in one line.
    await system.sendTelegram({ chatId: chat, text: 'c7202 hello again' });
    const sent = await system.waitForTelegram(chat, 7);
    expect(sent[5]?.text.startsWith(suspendedNoticePrefix)).toBe(true);
    expect(sent[6]?.text).toBe('echo: c7202 hello again');
  });
});
