import { describe, expect, it } from 'vitest';
import { commitTurn, createDbClient, ensureCurrentSession, loadConversation, loadSession, loadSessionMessages, storeInboundEvent } from '@switchboard/db';
import { useTestDbClient } from '@switchboard/db/testing';
import { createHistoryCache, messageBytes } from './history-cache.ts';

const db = useTestDbClient();

async function newSession(chatId: string): Promise<{ conversationId: number; sessionId: number }> {
  const stored = await storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: 'bot', eventId: `start-${chatId}`, conversationKey: `telegram:bot:${chatId}::`,
    chatId, threadId: '', userScope: '', userId: 'u', text: 'start', replyTarget: {}, refuseAtPending: null,
  });
  const conversation = await loadConversation(db.client.db, stored.conversationId);
  return { conversationId: stored.conversationId, sessionId: await ensureCurrentSession(db.client.db, conversation!) };
}

async function say(ids: { conversationId: number; sessionId: number }, ...texts: string[]) {
  const committed = await commitTurn(db.client.db, {
    conversationId: ids.conversationId, sessionId: ids.sessionId, status: 'completed', inboundEventIds: [], replies: [],
    messages: texts.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content, tokens: 1 })),
  });
  if (committed.kind !== 'committed') throw new Error('a commit without a turn or input is never fenced out');
  return committed;
}

const sessionRow = async (sessionId: number) => (await loadSession(db.client.db, sessionId))!;

describe('history cache', () => {
  it('gives the whole transcript in order as it grows, turn after turn', async () => {
    const cache = createHistoryCache(db.client.db, { maxMessages: 1000, maxBytes: 1 << 30 });
    const ids = await newSession('201');
    await say(ids, 'one', 'two');
    expect((await cache.load(await sessionRow(ids.sessionId))).map((m) => m.content)).toEqual(['one', 'two']);
    await say(ids, 'three', 'four');
    await say(ids, 'five');
    const history = await cache.load(await sessionRow(ids.sessionId));
    expect(history.map((m) => m.content)).toEqual(['one', 'two', 'three', 'four', 'five']);
    expect(history).toEqual(await loadSessionMessages(db.client.db, ids.sessionId));
    expect(cache.size).toBe(5);
  });

  it('reads the session again when a session row is older than what it holds, and keeps nothing inconsistent', async () => {
    const cache = createHistoryCache(db.client.db, { maxMessages: 1000, maxBytes: 1 << 30 });
    const ids = await newSession('202');
    await say(ids, 'a', 'b');
    const stale = await sessionRow(ids.sessionId);
    await say(ids, 'c');
    // The row says 2 messages but 3 are stored: the answer is what is stored, and it is not cached as "2".
    expect((await cache.load(stale)).map((m) => m.content)).toEqual(['a', 'b', 'c']);
    expect(cache.size).toBe(0);
    expect((await cache.load(await sessionRow(ids.sessionId))).map((m) => m.content)).toEqual(['a', 'b', 'c']);
    expect(cache.size).toBe(3);
  });

  it('stays within its bound, least recently used out first, and still answers correctly', async () => {
    const cache = createHistoryCache(db.client.db, { maxMessages: 4, maxBytes: 1 << 30 });
    const first = await newSession('203');
    const second = await newSession('204');
    await say(first, '1a', '1b', '1c');
    await say(second, '2a', '2b');
    await cache.load(await sessionRow(first.sessionId));
    await cache.load(await sessionRow(second.sessionId));
    expect(cache.size).toBe(2);
    expect((await cache.load(await sessionRow(first.sessionId))).map((m) => m.content)).toEqual(['1a', '1b', '1c']);
    expect(cache.size).toBeLessThanOrEqual(4);
    const off = createHistoryCache(db.client.db, { maxMessages: 0, maxBytes: 1 << 30 });
    expect((await off.load(await sessionRow(second.sessionId))).map((m) => m.content)).toEqual(['2a', '2b']);
    expect(off.size).toBe(0);
  });

  it('takes the rows a commit returns, so the next turn reads nothing, and ignores rows that leave a gap', async () => {
    const own = createDbClient(db.url, { max: 1 });
    const cache = createHistoryCache(own.db, { maxMessages: 1000, maxBytes: 1 << 30 });
    const ids = await newSession('205');
    await say(ids, 'a', 'b');
    await cache.load(await sessionRow(ids.sessionId));
    const committed = await say(ids, 'c', 'd');
    cache.append(ids.sessionId, committed.messages);
    const expected = await loadSessionMessages(db.client.db, ids.sessionId);
    const row = await sessionRow(ids.sessionId);
    // The cache's own connection is gone: the answer can only come from memory.
    await own.close();
    expect(await cache.load(row)).toEqual(expected);

    const reading = createHistoryCache(db.client.db, { maxMessages: 1000, maxBytes: 1 << 30 });
    await reading.load(await sessionRow(ids.sessionId));
    await say(ids, 'e');
    const skipped = await say(ids, 'f');
    reading.append(ids.sessionId, skipped.messages); // 'e' is missing: not taken
    expect((await reading.load(await sessionRow(ids.sessionId))).map((m) => m.content)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('is bounded by bytes too: a session of large documents does not stay, and pushes out older sessions by weight (issue 30, finding 3)', async () => {
    const document = 'd'.repeat(50_000);
    // Room for the two documents and a short answer, not for the small session beside them.
    const budget = 2 * messageBytes({ content: document }) + messageBytes({ content: 'ok' }) + 40;
    const cache = createHistoryCache(db.client.db, { maxMessages: 1000, maxBytes: budget });
    const small = await newSession('206');
    await say(small, 'hello', 'hi');
    await cache.load(await sessionRow(small.sessionId));
    expect(cache.size).toBe(2);

    const large = await newSession('207');
    await say(large, document, 'ok', document);
    // The small session, least recently used, goes; the large one stays.
    const history = await cache.load(await sessionRow(large.sessionId));
    expect(history.map((m) => m.content.length)).toEqual([50_000, 2, 50_000]);
    expect(cache.bytes).toBeLessThanOrEqual(budget);
    expect(cache.size).toBe(3);

    // One more document makes the session heavier than the whole budget: it is answered, but not kept.
    await say(large, document);
    expect((await cache.load(await sessionRow(large.sessionId))).length).toBe(4);
    expect(cache.bytes).toBe(0);
    expect(cache.size).toBe(0);
  });
});
