import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findToolTail } from '@switchboard/core';
import { createDbClient, loadTranscriptPage, type DbClient } from '@switchboard/db';
import { createRedisConnection, createTurnQueue, enqueueCompaction, eventsChannel, type LifecycleEvent , type RedisClient } from '@switchboard/queue';
import type { RunningWorker } from '@switchboard/worker';
import { TestSystem } from '../support/system.ts';
import {
  apiOnlyMarker,
  chatPrefix,
  lastUserText,
  modelRequests,
  recoveryNoteIndexes,
  requestsOfChat,
  waitForCondition,
  waitForIdle,
  waitForModelRequest,
  waitForRequestFor,
  type ChatMessage,
  type ModelRequest,
} from '../support/turn-helpers.ts';
import { smallContextEnv } from '../support/context-sizes.ts';
import { redisUrl } from '../support/test-env.ts';

/**
 * Preflight compression end to end (docs/compression.md, issue 4): real gateway, real
 * in-process worker, the simulator's scripted model as both the chat model
 * and the summariser, real Postgres and Redis.
 *
 * Sizes (test/support/context-sizes.ts): a 1,900-token context with the
 * threshold at 0.877, so the threshold is 1,666 and the kept tail 380 tokens.
 * Each user message below is ~137 tokens and its echo ~139, the system prompt
 * with tool schemas ~353, so a conversation reaches the threshold at its 6th
 * message (1,870 tokens) and no earlier (the 5th is 1,594), and without
 * compression its 7th request is over the context (2,146 > 1,900). After a compression with a short summary the next one
 * comes 4 messages later. The kept tail is then the last user message and
 * its echo.
 */

const contextTokens = Number(smallContextEnv.MODEL_CONTEXT_TOKENS);
const keepBudget = Math.floor(contextTokens * 0.2);
const maxAttempts = 2;
const summaryTimeoutMs = 2500;

const chats = { basic: 3001, errors: 3002, hanging: 3003, toolTail: 3004, chain: 3005, noShrink: 3006, interruptedDuring: 3007, seed: 3008, leaseLostDuring: 3009 };

const transcriptPrefix = 'Transcript to summarise:';
const summaryText = 'SUMMARY: the user sent long pangrams, each answered with an echo.';
const summaryMessagePrefix = 'Summary of the earlier conversation (written by the gateway):\n';
const filler = 'the quick brown fox jumps over the lazy dog '.repeat(14).trim();

/** The n-th long message of a chat; `c<chat>: mNN:` tells messages apart in requests and summaries. */
const long = (chat: number, n: number, copies = 1) => `${marker(chat, n)} ${Array.from({ length: copies }, () => filler).join(' ')}`;
const marker = (chat: number, n: number) => `${chatPrefix(chat)} m${String(n).padStart(2, '0')}:`;
/** A summarisation request of one chat's transcript (its user message holds the chat's messages). */
const summariserFor = (chat: number) => `^${transcriptPrefix}[\\s\\S]*${chatPrefix(chat)}`;
const toolMessage = (chat: number) => `${marker(chat, 5)} check the time, then wait`;

// One script for the file: every chat-specific rule names its chat; summarisation rules come first,
// because a summarisation request's last user message quotes the chat's own messages.
const script = {
  rules: [
    { matchRegex: summariserFor(chats.errors), error: { status: 500, message: 'summariser down' }, times: maxAttempts },
    { matchRegex: summariserFor(chats.hanging), hang: true },
    // A "summary" longer than what it replaces: compression that does not shrink.
    { matchRegex: summariserFor(chats.noShrink), replyRepeat: { text: 'word ', count: 3000 } },
    // A slow summary, to interrupt the turn while it is being written.
    { matchRegex: summariserFor(chats.interruptedDuring), reply: summaryText, delayMs: 1200 },
    { matchRegex: summariserFor(chats.seed), reply: summaryText, delayMs: 1200 },
    { matchRegex: summariserFor(chats.leaseLostDuring), reply: summaryText, delayMs: 1500 },
    { match: transcriptPrefix, reply: summaryText },
    {
      matchRegex: `^${toolMessage(chats.toolTail)}$`,
      toolCalls: [
        { name: 'current_time', arguments: {} },
        { name: 'wait', arguments: { seconds: 20 } },
      ],
      times: 1,
    },
    {
      matchRegex: `^${toolMessage(chats.seed)}$`,
      toolCalls: [
        { name: 'current_time', arguments: {} },
        { name: 'wait', arguments: { seconds: 20 } },
      ],
      times: 1,
    },
  ],
};

interface SessionRow {
  id: number;
  parent: number | null;
  status: 'active' | 'compressed' | 'finalized';
  compress_failures: number;
  compress_blocked: boolean;
  recovery_ack_key: string | null;
}

interface StoredMessage {
  session_id: number;
  seq: number;
  role: 'user' | 'assistant' | 'tool';
  kind: 'message' | 'summary';
  content: string;
  tool_calls: { id: string; name: string; arguments: string }[] | null;
  tool_call_id: string | null;
  tool_name: string | null;
  inbound_event_id: number | null;
  tokens: number;
}

interface Chain {
  conversationId: number;
  currentSessionId: number;
  /** Oldest first. */
  sessions: SessionRow[];
  messagesOf(sessionId: number): StoredMessage[];
  all: StoredMessage[];
}

describe('preflight compression', () => {
  let system: TestSystem;
  let db: DbClient;
  let subscriber: RedisClient;
  const events: LifecycleEvent[] = [];
  const replyCounts = new Map<number, number>();

  beforeAll(async () => {
    system = await TestSystem.start({
      workerEnv: {
        ...smallContextEnv,
        COMPRESSION_MAX_ATTEMPTS: String(maxAttempts),
        COMPRESSION_BACKOFF_MS: '0',
        SUMMARY_TIMEOUT_MS: String(summaryTimeoutMs),
      },
    });
    await system.setModelScript(script);
    db = createDbClient(system.databaseUrl, { max: 2 });
    subscriber = createRedisConnection(redisUrl(), 'subscriber');
    subscriber.on('message', (_channel, message: string) => events.push(JSON.parse(message) as LifecycleEvent));
    await subscriber.subscribe(eventsChannel(system.redisPrefix));
  }, 60_000);
  afterAll(async () => {
    subscriber?.disconnect();
    await db?.close();
    await system?.close();
  });

  /** Sends one message and waits for its reply (or, with `expectReply: false`, only for the send). */
  async function say(chat: number, text: string, options: { expectReply?: boolean } = {}): Promise<string | undefined> {
    const { status } = await system.sendTelegram({ chatId: chat, text });
    expect(status).toBe(200);
    if (options.expectReply === false) return undefined;
    const count = (replyCounts.get(chat) ?? 0) + 1;
    replyCounts.set(chat, count);
    const sent = await system.waitForTelegram(chat, count);
    return sent.at(-1)?.text;
  }

  /** Sends long messages `from`..`to` one at a time; each must be answered with its echo. */
  async function converse(chat: number, from: number, to: number): Promise<void> {
    for (let n = from; n <= to; n++) expect(await say(chat, long(chat, n))).toBe(`echo: ${long(chat, n)}`);
  }

  async function loadChain(chat: number): Promise<Chain> {
    const [conversation] = await system.sql<{ id: number; current: number }[]>`
      select id::int as id, current_session_id::int as current from conversations where chat_id = ${String(chat)}`;
    if (!conversation) throw new Error(`no conversation for chat ${chat}`);
    const sessions = await system.sql<SessionRow[]>`
      select id::int as id, parent_session_id::int as parent, status, compress_failures, compress_blocked, recovery_ack_key
      from sessions where conversation_id = ${conversation.id} order by id`;
    const all = await system.sql<StoredMessage[]>`
      select m.session_id::int as session_id, m.seq, m.role, m.kind, m.content, m.tool_calls, m.tool_call_id, m.tool_name,
        m.inbound_event_id::int as inbound_event_id, m.tokens
      from messages m join sessions s on s.id = m.session_id
      where s.conversation_id = ${conversation.id} order by m.session_id, m.seq`;
    return {
      conversationId: conversation.id,
      currentSessionId: conversation.current,
      sessions,
      all,
      messagesOf: (sessionId) => all.filter((m) => m.session_id === sessionId),
    };
  }

  async function summarisationRequests(chat: number): Promise<ModelRequest[]> {
    return (await modelRequests(system)).filter((r) => lastUserText(r).startsWith(transcriptPrefix) && lastUserText(r).includes(`${chatPrefix(chat)} `));
  }

  async function chatRequests(chat: number): Promise<ModelRequest[]> {
    return requestsOfChat(await modelRequests(system), chat);
  }

  /** One counter of the in-process worker's /metrics (0 when the label was never counted). */
  async function metric(name: string, labels = ''): Promise<number> {
    const worker = system.workers[0] as RunningWorker;
    const text = await (await fetch(`${worker.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  }

  async function counters(): Promise<{ done: number; failed: number; trimmed: number }> {
    const [done, failed, trimmed] = await Promise.all([
      metric('switchboard_compressions_total', 'outcome="done"'),
      metric('switchboard_compressions_total', 'outcome="failed"'),
      metric('switchboard_requests_trimmed_total'),
    ]);
    return { done, failed, trimmed };
  }

  const pairs = (messages: readonly (ChatMessage | StoredMessage)[]) => messages.map((m) => [m.role, m.content]);

  it('compresses a long conversation once: child session, moved pointer, summary sent as system context, nothing lost', async () => {
    const chat = chats.basic;
    const before = await counters();
    await converse(chat, 1, 6);
    await waitForIdle(system, [chat]);

    const summaries = await summarisationRequests(chat);
    expect(summaries).toHaveLength(1);
    const chain = await loadChain(chat);
    expect(chain.sessions).toHaveLength(2);
    const [root, child] = chain.sessions as [SessionRow, SessionRow];
    expect([root.parent, root.status]).toEqual([null, 'compressed']);
    expect([child.parent, child.status, child.compress_blocked, child.compress_failures]).toEqual([root.id, 'active', false, 0]);
    expect(chain.currentSessionId).toBe(child.id);

    // The old session is left as it was; the child opens with the summary, then copies of the kept tail, then turn 6.
    const old = chain.messagesOf(root.id);
    expect(pairs(old)).toEqual([1, 2, 3, 4, 5].flatMap((n) => [['user', long(chat, n)], ['assistant', `echo: ${long(chat, n)}`]]));
    const childMessages = chain.messagesOf(child.id);
    expect(childMessages[0]).toMatchObject({ seq: 1, role: 'assistant', kind: 'summary', content: summaryText, inbound_event_id: null });
    expect(pairs(childMessages.slice(-2))).toEqual([['user', long(chat, 6)], ['assistant', `echo: ${long(chat, 6)}`]]);
    const copies = childMessages.slice(1, -2);
    const keptCount = copies.length;
    expect(keptCount).toBeGreaterThan(0);
    const kept = old.slice(-keptCount);
    const summarised = old.slice(0, old.length - keptCount);
    expect(copies.map(({ role, kind, content, tool_calls, tool_call_id, tool_name, inbound_event_id, tokens }) => ({ role, kind, content, tool_calls, tool_call_id, tool_name, inbound_event_id, tokens }))).toEqual(
      kept.map(({ role, kind, content, tool_calls, tool_call_id, tool_name, inbound_event_id, tokens }) => ({ role, kind, content, tool_calls, tool_call_id, tool_name, inbound_event_id, tokens })),
    );
    expect(kept.reduce((sum, m) => sum + m.tokens, 0)).toBeLessThanOrEqual(keepBudget);
    expect(kept[0]?.role).not.toBe('tool');
    expect(childMessages.map((m) => m.seq)).toEqual(childMessages.map((_, i) => i + 1));

    // The summariser read exactly the summarised messages: every one of them, none of the kept ones.
    const transcript = lastUserText(summaries[0]!);
    for (const m of summarised) expect(transcript).toContain(m.role === 'user' ? `User: ${m.content}` : `Assistant: ${m.content}`);
    for (const m of kept) expect(transcript).not.toContain(m.content);

    // The request after the compression: system prompt, the summary as a system message, the kept tail, the new message.
    const sixth = await waitForRequestFor(system, long(chat, 6));
    expect(sixth.id).toBeGreaterThan(summaries[0]!.id);
    const [prompt, summaryMessage, ...rest] = sixth.body.messages;
    expect(prompt?.role).toBe('system');
    expect(summaryMessage).toEqual({ role: 'system', content: `${summaryMessagePrefix}${summaryText}` });
    expect(pairs(rest)).toEqual([...pairs(kept), ['user', long(chat, 6)]]);
    for (const m of summarised) expect(JSON.stringify(sixth.body)).not.toContain(m.content.slice(0, 40));

    // Across the chain (the admin transcript query) every message is still there; only the kept tail appears twice.
    const page = await loadTranscriptPage(db.db, { conversationId: chain.conversationId, order: 'asc', limit: 1000 });
    expect(page.next).toBeNull();
    const userTexts = page.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect([...new Set(userTexts)]).toEqual([1, 2, 3, 4, 5, 6].map((n) => long(chat, n)));
    const keptUsers = kept.filter((m) => m.role === 'user').map((m) => m.content);
    for (const text of new Set(userTexts)) expect(userTexts.filter((t) => t === text)).toHaveLength(keptUsers.includes(text) ? 2 : 1);
    // Every inbound message was taken by a turn and stored once where that turn ran.
    const inbound = await system.sql<{ id: number; status: string; stored: number }[]>`
      select e.id::int as id, e.status,
        (select count(*)::int from messages m join turns t on t.id = e.turn_id where m.inbound_event_id = e.id and m.session_id = t.session_id) as stored
      from inbound_events e where e.conversation_id = ${chain.conversationId} order by e.id`;
    expect(inbound.map((e) => [e.status, e.stored])).toEqual(Array.from({ length: 6 }, () => ['done', 1]));

    await waitForCondition('the session.compressed event', async () => events.some((e) => e.type === 'session.compressed' && e.conversationId === chain.conversationId));
    expect(events.filter((e) => e.type === 'session.compressed' && e.conversationId === chain.conversationId)).toEqual([
      expect.objectContaining({ sessionId: root.id, childSessionId: child.id }),
    ]);
    const after = await counters();
    expect(after.done - before.done).toBe(1);
    expect(after.failed - before.failed).toBe(0);
    expect(after.trimmed - before.trimmed).toBe(0);
  });

  it('a failing summariser never loops: every message answered, at most COMPRESSION_MAX_ATTEMPTS tries, counted, oversized requests trimmed; /compact still works', async () => {
    const chat = chats.errors;
    const before = await counters();
    await converse(chat, 1, 8);
    await waitForIdle(system, [chat]);

    const summaries = await summarisationRequests(chat);
    expect(summaries).toHaveLength(maxAttempts);
    expect(summaries.map((r) => r.status)).toEqual([500, 500]);
    const after = await counters();
    expect(after.failed - before.failed).toBe(maxAttempts);
    expect(after.done - before.done).toBe(0);
    // Messages 7 and 8 no longer fit the context uncompressed; message 6 did.
    expect(after.trimmed - before.trimmed).toBe(2);

    const chain = await loadChain(chat);
    expect(chain.sessions).toHaveLength(1);
    expect(chain.sessions[0]).toMatchObject({ status: 'active', compress_failures: maxAttempts, compress_blocked: true });
    const requests = await chatRequests(chat);
    expect(requests.map(lastUserText)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => long(chat, n)));
    // The 6th goes on uncompressed with its whole history; the 7th and 8th leave the oldest messages out.
    expect(requests[5]!.body.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([1, 2, 3, 4, 5, 6].map((n) => long(chat, n)));
    for (const request of requests.slice(6)) {
      expect(request.body.messages.map((m) => m.content)).not.toContain(long(chat, 1));
      expect(request.body.messages[1]?.role).not.toBe('tool');
      expect(request.body.messages.at(-1)).toEqual({ role: 'user', content: lastUserText(request) });
    }

    // Automatic compression is stopped for this session; /compact asks anyway (and this time the summariser answers).
    expect(await say(chat, '/compact')).toMatch(/^Done: \d+ older messages are now a summary\.$/);
    const compacted = await loadChain(chat);
    expect(compacted.sessions).toHaveLength(2);
    const [root, child] = compacted.sessions as [SessionRow, SessionRow];
    expect([root.status, child.parent, child.status, child.compress_blocked]).toEqual(['compressed', root.id, 'active', false]);
    expect(compacted.currentSessionId).toBe(child.id);
    expect(await summarisationRequests(chat)).toHaveLength(maxAttempts + 1);

    await converse(chat, 9, 9);
    const ninth = await waitForRequestFor(system, long(chat, 9));
    expect(ninth.body.messages[1]).toEqual({ role: 'system', content: `${summaryMessagePrefix}${summaryText}` });
    const stored = (await loadChain(chat)).messagesOf(child.id).filter((m) => m.content === long(chat, 9));
    expect(stored).toHaveLength(1);
  });

  it('a hanging summariser times out: every message answered, at most COMPRESSION_MAX_ATTEMPTS tries, counted', async () => {
    const chat = chats.hanging;
    const before = await counters();
    const startedAt = performance.now();
    await converse(chat, 1, 8);
    await waitForIdle(system, [chat]);

    const summaries = await summarisationRequests(chat);
    expect(summaries).toHaveLength(maxAttempts);
    // The summariser gave up on each (the client aborted the request), after about SUMMARY_TIMEOUT_MS.
    await waitForCondition('the hung summaries to be aborted', async () => (await summarisationRequests(chat)).every((r) => r.abortedAt !== undefined), 5000);
    for (const r of await summarisationRequests(chat)) expect(r.abortedAt! - r.receivedAt).toBeGreaterThanOrEqual(summaryTimeoutMs - 100);
    expect(performance.now() - startedAt).toBeLessThan(maxAttempts * summaryTimeoutMs + 15_000);
    const after = await counters();
    expect(after.failed - before.failed).toBe(maxAttempts);
    expect(after.trimmed - before.trimmed).toBe(2);
    const chain = await loadChain(chat);
    expect(chain.sessions).toHaveLength(1);
    expect(chain.sessions[0]).toMatchObject({ compress_failures: maxAttempts, compress_blocked: true });
    expect(chain.all.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => long(chat, n)));
  });

  it('an interrupted tool tail before a compressing message: no recovery note in the summary or the child, and the note is sent once', async () => {
    const chat = chats.toolTail;
    await converse(chat, 1, 4);
    // Message 5 starts current_time + wait(20); message 6 (twice as long) interrupts it and pushes the session over the threshold.
    await say(chat, toolMessage(chat), { expectReply: false });
    await waitForRequestFor(system, toolMessage(chat), 'finished');
    expect(await say(chat, long(chat, 6, 2))).toBe(`echo: ${long(chat, 6, 2)}`);
    expect(await say(chat, `${marker(chat, 7)} thanks`)).toBe(`echo: ${marker(chat, 7)} thanks`);
    await waitForIdle(system, [chat]);

    const turns = await system.sql<{ status: string }[]>`
      select t.status from turns t join conversations c on c.id = t.conversation_id where c.chat_id = ${String(chat)} order by t.id`;
    expect(turns.map((t) => t.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'interrupted', 'completed', 'completed']);

    const chain = await loadChain(chat);
    expect(chain.sessions).toHaveLength(2);
    const [root, child] = chain.sessions as [SessionRow, SessionRow];
    expect(chain.currentSessionId).toBe(child.id);
    const old = chain.messagesOf(root.id);
    const tail = findToolTail(old.map(toTailMessage));
    expect(tail?.count).toBe(2);
    const oldTail = old.slice(-3);
    expect(oldTail.map((m) => m.role)).toEqual(['assistant', 'tool', 'tool']);

    // Nothing API-only reached the summariser, the stored summary, or any stored message.
    const summaries = await summarisationRequests(chat);
    expect(summaries).toHaveLength(1);
    expect(JSON.stringify(summaries[0]!.body)).not.toContain(apiOnlyMarker);
    const summaryRow = chain.messagesOf(child.id)[0]!;
    expect(summaryRow).toMatchObject({ kind: 'summary', content: summaryText });
    expect(chain.all.filter((m) => m.content.includes(apiOnlyMarker))).toEqual([]);
    // Tool output of the interrupted tail is never presented to the summariser as news: summarised, it is marked unread.
    const transcript = lastUserText(summaries[0]!);
    for (const result of oldTail.slice(1)) {
      const line = transcript.split('\n').find((l) => l.includes(result.content));
      if (line) expect(line).toContain(', never read]');
    }

    // The kept tail went to the child verbatim, so its key is unchanged and the note is not owed twice.
    const childMessages = chain.messagesOf(child.id);
    const copiedTail = childMessages.filter((m) => m.tool_call_id !== null || m.tool_calls !== null);
    expect(copiedTail.map((m) => [m.role, m.content, m.tool_call_id])).toEqual(oldTail.map((m) => [m.role, m.content, m.tool_call_id]));
    expect(child.recovery_ack_key).toBe(tail?.key);

    // The note: once, in the request for message 6, between the tail and message 6; not before or after.
    const requests = await chatRequests(chat);
    const noted = requests.filter((r) => JSON.stringify(r.body).includes(apiOnlyMarker));
    expect(noted).toHaveLength(1);
    const sixth = noted[0]!;
    expect(lastUserText(sixth)).toBe(long(chat, 6, 2));
    expect(sixth.id).toBeGreaterThan(summaries[0]!.id);
    const messages = sixth.body.messages;
    expect(recoveryNoteIndexes(sixth)).toEqual([messages.length - 2]);
    expect(messages[messages.length - 3]?.role).toBe('tool');
    expect(messages[1]).toEqual({ role: 'system', content: `${summaryMessagePrefix}${summaryText}` });
  });

  it('the seed: an interrupted tool tail, a compressing message interrupted while the summary is written; the next turn carries the note once', async () => {
    // Issue 16, defect 3: the turn meant to carry the note ended before its model request,
    // so the session ends in a user message; the note is still owed to the tail behind it.
    const chat = chats.seed;
    await converse(chat, 1, 4);
    await say(chat, toolMessage(chat), { expectReply: false });
    await waitForRequestFor(system, toolMessage(chat), 'finished');
    await say(chat, long(chat, 6, 2), { expectReply: false });
    const isSummary = (r: ModelRequest) => lastUserText(r).startsWith(transcriptPrefix) && lastUserText(r).includes(`${chatPrefix(chat)} `);
    await waitForModelRequest(system, isSummary, { what: 'summarising the seed chat' });
    expect(await say(chat, `${marker(chat, 7)} thanks`)).toBe(`echo: ${marker(chat, 7)} thanks`);
    expect(await say(chat, `${marker(chat, 8)} and again`)).toBe(`echo: ${marker(chat, 8)} and again`);
    await waitForIdle(system, [chat]);

    const turns = await system.sql<{ status: string }[]>`
      select t.status from turns t join conversations c on c.id = t.conversation_id where c.chat_id = ${String(chat)} order by t.id`;
    expect(turns.map((t) => t.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'interrupted', 'interrupted', 'completed', 'completed']);
    const chain = await loadChain(chat);
    expect(chain.sessions).toHaveLength(2);
    const child = chain.sessions[1]!;
    const childMessages = chain.messagesOf(child.id);
    // The child as message 7's turn found it: the copied tail, then message 6 that never reached the model.
    const beforeSeven = childMessages.slice(0, childMessages.findIndex((m) => m.content === long(chat, 6, 2)) + 1);
    const tail = findToolTail(beforeSeven.map(toTailMessage));
    expect(tail?.count).toBe(2);

    // Message 6 never reached the model; message 7's request carries the note, between message 6 and message 7; message 8's none.
    const requests = await chatRequests(chat);
    expect(requests.map(lastUserText).filter((t) => t === long(chat, 6, 2))).toEqual([]);
    const noted = requests.filter((r) => recoveryNoteIndexes(r).length > 0);
    expect(noted.map(lastUserText)).toEqual([`${marker(chat, 7)} thanks`]);
    const messages = noted[0]!.body.messages;
    expect(recoveryNoteIndexes(noted[0]!)).toEqual([messages.length - 2]);
    expect(messages.slice(-5).map((m) => m.role)).toEqual(['tool', 'tool', 'user', 'system', 'user']);
    expect(messages.at(-3)).toEqual({ role: 'user', content: long(chat, 6, 2) });
    expect(child.recovery_ack_key).toBe(tail?.key);
    expect(chain.all.filter((m) => m.content.includes(apiOnlyMarker))).toEqual([]);
  });

  // Issue 29 (found by the scenario test, SEED=4242 and SEED=505): a preflight summary outlives a lost lease by design; the
  // holding that wrote it sent its model request afterwards, beside the new holder's turn, with input that turn answered.
  it('a holding whose lease was lost while it summarised sends no model request after the summary', async () => {
    const chat = chats.leaseLostDuring;
    await converse(chat, 1, 5);
    await say(chat, long(chat, 6), { expectReply: false });
    const isSummary = (r: ModelRequest) => lastUserText(r).startsWith(transcriptPrefix) && lastUserText(r).includes(`${chatPrefix(chat)} `);
    await waitForModelRequest(system, isSummary, { what: 'summarising the chat whose lease is lost' });
    // A failover: the lease key is gone while the summary is written, and the next message's wake-up takes the lease.
    const { conversationId } = await loadChain(chat);
    const redis = new Redis(redisUrl());
    try {
      expect(await redis.del(`${system.redisPrefix}:lease:conversation:${conversationId}`)).toBe(1);
    } finally {
      redis.disconnect();
    }
    await say(chat, long(chat, 7), { expectReply: false });
    await waitForCondition('the summary to be answered', async () => (await summarisationRequests(chat)).some((r) => r.status === 200), 15_000);
    await waitForIdle(system, [chat]);
    // The new holder's turn answered messages 6 and 7 together; the old holding's turn, still on message 6 alone, asked nothing.
    const lastInputs = (await chatRequests(chat)).slice(5).map(lastUserText);
    expect(lastInputs).not.toContain(long(chat, 6));
    expect(lastInputs.at(-1)).toBe(long(chat, 7));
    expect((await system.waitForTelegram(chat, 6)).at(-1)?.text).toBe(`echo: ${long(chat, 7)}`);
  });

  it('an interrupt while the summary is written keeps the summary: the commit happens, the turn ends without a model call, the next message runs on the child', async () => {
    const chat = chats.interruptedDuring;
    const before = await counters();
    await converse(chat, 1, 5);
    await say(chat, long(chat, 6), { expectReply: false });
    const isSummary = (r: ModelRequest) => lastUserText(r).startsWith(transcriptPrefix) && lastUserText(r).includes(`${chatPrefix(chat)} `);
    await waitForModelRequest(system, isSummary, { what: 'summarising the interrupted chat' });
    expect(await say(chat, long(chat, 7))).toBe(`echo: ${long(chat, 7)}`);
    await waitForIdle(system, [chat]);

    const summaries = await summarisationRequests(chat);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ status: 200 });
    expect(summaries[0]?.abortedAt).toBeUndefined();
    const chain = await loadChain(chat);
    expect(chain.sessions).toHaveLength(2);
    const [root, child] = chain.sessions as [SessionRow, SessionRow];
    expect(chain.currentSessionId).toBe(child.id);
    expect(child.parent).toBe(root.id);
    expect((await counters()).done - before.done).toBe(1);

    const turns = await system.sql<{ status: string; session_id: number }[]>`
      select t.status, t.session_id::int as session_id from turns t where t.conversation_id = ${chain.conversationId} order by t.id`;
    expect(turns.map((t) => t.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed', 'interrupted', 'completed']);
    expect(turns.slice(5).map((t) => t.session_id)).toEqual([child.id, child.id]);
    // Message 6 never reached the model on its own; it is stored in the child and read with message 7, after the summary.
    const requests = await chatRequests(chat);
    expect(requests.map(lastUserText)).toEqual([1, 2, 3, 4, 5, 7].map((n) => long(chat, n)));
    const seventh = requests.at(-1)!;
    expect(seventh.body.messages[1]).toEqual({ role: 'system', content: `${summaryMessagePrefix}${summaryText}` });
    expect(seventh.body.messages.slice(-2)).toEqual([
      { role: 'user', content: long(chat, 6) },
      { role: 'user', content: long(chat, 7) },
    ]);
    expect(chain.messagesOf(child.id).filter((m) => m.content === long(chat, 6)).map((m) => m.role)).toEqual(['user']);
    expect((await system.waitForTelegram(chat, 6)).map((m) => m.text)).toEqual([1, 2, 3, 4, 5, 7].map((n) => `echo: ${long(chat, n)}`));
  });

  it('keeps the session chain a line through several compressions', async () => {
    const chat = chats.chain;
    await converse(chat, 1, 14);
    await waitForIdle(system, [chat]);

    const chain = await loadChain(chat);
    const compressions = chain.sessions.length - 1;
    expect(compressions).toBeGreaterThanOrEqual(3);
    expect(await summarisationRequests(chat)).toHaveLength(compressions);
    expectLine(chain);
    // Each child's summary folds in the previous one (the summariser was shown it).
    const summaries = await summarisationRequests(chat);
    for (const request of summaries.slice(1)) expect(lastUserText(request)).toContain(`Earlier summary: ${summaryText}`);
    const page = await loadTranscriptPage(db.db, { conversationId: chain.conversationId, order: 'asc', limit: 1000 });
    const userTexts = page.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect([...new Set(userTexts)]).toEqual(Array.from({ length: 14 }, (_, i) => long(chat, i + 1)));
  });

  it('stops automatic compression after two compressions in a row that do not shrink; the admin compact job still runs', async () => {
    const chat = chats.noShrink;
    await converse(chat, 1, 9);
    await waitForIdle(system, [chat]);

    // Compressions at messages 6 and 7 each made the session bigger; messages 8 and 9 did not try again.
    expect(await summarisationRequests(chat)).toHaveLength(2);
    const chain = await loadChain(chat);
    expect(chain.sessions).toHaveLength(3);
    expect(chain.sessions.at(-1)).toMatchObject({ status: 'active', compress_failures: 2, compress_blocked: true });
    expectLine(chain);

    // The operator's compact job goes through the same path with force.
    const connection = createRedisConnection(redisUrl(), 'producer');
    const queue = createTurnQueue(connection, system.redisPrefix);
    try {
      await enqueueCompaction(queue, { conversationId: chain.conversationId, requestedBy: 'compression.e2e' });
      await waitForCondition('the admin compaction', async () => (await loadChain(chat)).sessions.length === 4, 15_000);
    } finally {
      await queue.close();
      connection.disconnect();
    }
    const compacted = await loadChain(chat);
    expect(compacted.sessions.at(-1)?.parent).toBe(chain.currentSessionId);
    expect(await summarisationRequests(chat)).toHaveLength(3);
    expectLine(compacted);
  });

  it('leaves every conversation of the file with a line of sessions and exactly one active one', async () => {
    const conversations = await system.sql<{ id: number; chat_id: string }[]>`select id::int as id, chat_id from conversations order by id`;
    expect(conversations.map((c) => Number(c.chat_id)).sort()).toEqual(Object.values(chats).sort());
    for (const { chat_id } of conversations) expectLine(await loadChain(Number(chat_id)));
    const forks = await system.sql`select parent_session_id from sessions where parent_session_id is not null group by 1 having count(*) > 1`;
    expect(forks).toHaveLength(0);
  });
});

/** No two sessions share a parent, exactly one is active and current, and walking parents from it visits every session once. */
function expectLine(chain: Chain): void {
  const parents = chain.sessions.map((s) => s.parent).filter((p) => p !== null);
  expect(new Set(parents).size).toBe(parents.length);
  const active = chain.sessions.filter((s) => s.status === 'active');
  expect(active.map((s) => s.id)).toEqual([chain.currentSessionId]);
  const byId = new Map(chain.sessions.map((s) => [s.id, s]));
  const walked: number[] = [];
  for (let id: number | null = chain.currentSessionId; id !== null; id = byId.get(id)?.parent ?? null) {
    expect(walked).not.toContain(id);
    walked.push(id);
  }
  expect(walked.reverse()).toEqual(chain.sessions.map((s) => s.id));
  for (const s of chain.sessions.slice(0, -1)) expect(s.status).toBe('compressed');
  // Every child opens with its summary.
  for (const s of chain.sessions.slice(1)) expect(chain.messagesOf(s.id)[0]).toMatchObject({ seq: 1, kind: 'summary', role: 'assistant' });
}

function toTailMessage(m: StoredMessage) {
  return { role: m.role, content: m.content, toolCallId: m.tool_call_id, toolName: m.tool_name, toolCalls: m.tool_calls };
}
