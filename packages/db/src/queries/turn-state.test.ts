import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { loadSession } from './session-store.ts';
import { hasPendingWork, loadTurnState } from './turn-state.ts';
import { beginTurn } from './turn-begin.ts';
import { commitTurn } from './turn-commit.ts';
import { ensureCurrentSession, loadConversation, loadPendingInbound } from './turn-loaders.ts';
import { storeInboundEvent } from './store-inbound.ts';

const db = useTestDbClient();

async function storeMessage(chatId: string, eventId: string, text: string) {
  return storeInboundEvent(db.client.db, {
    platform: 'telegram',
    accountId: 'bot',
    eventId,
    conversationKey: `telegram:bot:${chatId}::`,
    chatId,
    threadId: '',
    userScope: '',
    userId: 'u1',
    text,
    replyTarget: { chat_id: Number(chatId), reply_to: { message_id: 7 } },
    refuseAtPending: null,
  });
}

describe('loadTurnState', () => {
  it('returns the same rows, with the same types, as the separate drizzle reads', async () => {
    const first = await storeMessage('101', 'e1', 'hello');
    await storeMessage('101', 'e2', 'and more');
    const conversation = await loadConversation(db.client.db, first.conversationId);
    const sessionId = await ensureCurrentSession(db.client.db, conversation!);
    const begun = await beginTurn(db.client.db, { conversationId: first.conversationId, sessionId, workerId: 'w1', suspendThreshold: 3, firstInputEventId: first.inboundEventId, maxRunningPerUser: 4 });
    const turnId = begun.kind === 'begun' ? begun.turnId : 0;
    await commitTurn(db.client.db, {
      turnId,
      conversationId: first.conversationId,
      sessionId,
      status: 'completed',
      inboundEventIds: [first.inboundEventId],
      messages: [{ role: 'user', content: 'hello', tokens: 2, inboundEventId: first.inboundEventId }],
      replies: [{ platform: 'telegram', target: { chat_id: 101 }, chunks: ['part one', 'part two'] }],
    });

    const state = await loadTurnState(db.client.db, first.conversationId, 10);
    expect(state?.conversation).toEqual(await loadConversation(db.client.db, first.conversationId));
    expect(state?.session).toEqual(await loadSession(db.client.db, sessionId));
    expect(state?.pending).toEqual(await loadPendingInbound(db.client.db, first.conversationId, 10));
    expect(state?.pending.map((e) => e.text)).toEqual(['and more']);
    expect(state?.pending[0]?.receivedAt).toBeInstanceOf(Date);
    expect(state?.outbox.map((o) => o.text)).toEqual(['part one', 'part two']);
    expect(state?.lastTurn).toMatchObject({ id: turnId, status: 'completed', sessionId, cutOffAt: null });
    expect(await hasPendingWork(db.client.db, first.conversationId)).toBe(true);
  });

  it('knows a conversation without a session or turns, and answers undefined for an unknown one', async () => {
    const stored = await storeMessage('102', 'e3', 'first words');
    const state = await loadTurnState(db.client.db, stored.conversationId, 10);
    expect(state?.session).toBeUndefined();
    expect(state?.lastTurn).toBeUndefined();
    expect(state?.outbox).toEqual([]);
    expect(state?.pending).toHaveLength(1);
    expect(await loadTurnState(db.client.db, 987_654, 10)).toBeUndefined();
  });

  it('returns, from the commit, every reply still waiting, oldest first', async () => {
    const stored = await storeMessage('103', 'e4', 'hi');
    const conversation = await loadConversation(db.client.db, stored.conversationId);
    const sessionId = await ensureCurrentSession(db.client.db, conversation!);
    const commit = (eventIds: number[], chunks: string[]) =>
      commitTurn(db.client.db, { conversationId: stored.conversationId, sessionId, status: 'completed', inboundEventIds: eventIds, messages: [], replies: [{ platform: 'telegram', target: {}, chunks }] });
    await commit([], ['an earlier notice']);
    const committed = await commit([stored.inboundEventId], ['the reply']);
    const outbox = committed.kind === 'committed' ? committed.outbox : [];
    expect(outbox.map((o) => o.text)).toEqual(['an earlier notice', 'the reply']);
    expect(outbox[1]?.createdAt).toBeInstanceOf(Date);
    expect(await hasPendingWork(db.client.db, stored.conversationId)).toBe(true);
    await db.client.db.$client`update outbox set status = 'sent' where conversation_id = ${stored.conversationId}`;
    expect(await hasPendingWork(db.client.db, stored.conversationId)).toBe(false);
  });

  it("names the oldest pending input's user with beginTurn's key, and counts that user's running turns in every conversation", async () => {
    const running = await storeMessage('106', 'e6', 'busy here');
    const conversation = await loadConversation(db.client.db, running.conversationId);
    const sessionId = await ensureCurrentSession(db.client.db, conversation!);
    await beginTurn(db.client.db, { conversationId: running.conversationId, sessionId, workerId: 'w1', suspendThreshold: 3, firstInputEventId: running.inboundEventId, maxRunningPerUser: 4 });
    const [turn] = await db.client.db.$client<{ user_key: string }[]>`select user_key from turns where conversation_id = ${running.conversationId}`;
    const waiting = await storeMessage('107', 'e7', 'and here');
    const state = await loadTurnState(db.client.db, waiting.conversationId, 10);
    expect(state?.pendingUser).toEqual({ key: turn?.user_key, runningTurns: 1 });
    expect(turn?.user_key).toBe('telegram:bot:u1');
    await db.client.db.$client`update inbound_events set status = 'done' where conversation_id = ${waiting.conversationId}`;
    expect((await loadTurnState(db.client.db, waiting.conversationId, 10))?.pendingUser).toBeUndefined();
  });
});
