import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { storeInboundEvent } from './store-inbound.ts';
import { openReplyStream, recordStreamMessage } from './stream-store.ts';
import { abandonTurn, beginTurn, commitTurn, ensureCurrentSession, loadConversation, type CommitTurnInput } from './turn-store.ts';

// Issue 22, item 1: the outbox owns a streamed reply's message (docs/turns.md
// "Streaming replies"), so the commit edits it instead of posting again, and
// a resumed turn takes over the message a cut-off one left.
const db = useTestDbClient();

async function newConversation(chatId: string) {
  const stored = await storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: 'bot', eventId: `s-${chatId}`, conversationKey: `telegram:bot:${chatId}::`,
    chatId, threadId: '', userScope: '', userId: `u${chatId}`, text: 'tell me a story', replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
  });
  const conversation = await loadConversation(db.client.db, stored.conversationId);
  const sessionId = await ensureCurrentSession(db.client.db, conversation!);
  return { conversationId: stored.conversationId, sessionId, eventId: stored.inboundEventId };
}

type Ids = Awaited<ReturnType<typeof newConversation>>;

async function begin(ids: Ids): Promise<number> {
  const begun = await beginTurn(db.client.db, { conversationId: ids.conversationId, sessionId: ids.sessionId, workerId: 'w1', suspendThreshold: 3, firstInputEventId: ids.eventId, maxRunningPerUser: 100 });
  if (begun.kind !== 'begun') throw new Error(`turn not begun: ${begun.kind}`);
  return begun.turnId;
}

const commitOf = (ids: Ids, turnId: number | undefined, chunks: string[], inboundEventIds = [ids.eventId]): CommitTurnInput => ({
  turnId, conversationId: ids.conversationId, sessionId: ids.sessionId, status: 'completed', inboundEventIds,
  messages: [], replies: [{ platform: 'telegram', target: { chat_id: 1 }, chunks }], claimFor: 'w1#1',
});

const open = (ids: Ids, turnId: number) => openReplyStream(db.client.db, { conversationId: ids.conversationId, turnId, platform: 'telegram', target: { chat_id: 1 }, claimFor: 'w1#1' });

async function outboxOf(conversationId: number) {
  return db.client.db.$client<{ id: string; status: string; text: string; streamed: boolean; platform_message_id: string | null; chunk_index: number }[]>`
    select id, status, text, streamed, platform_message_id, chunk_index from outbox where conversation_id = ${conversationId} order by id`;
}

describe('openReplyStream and the commit', () => {
  it('makes the growing message the first part of the committed reply, with its message id; later parts are new rows', async () => {
    const ids = await newConversation('701');
    const turnId = await begin(ids);
    const stream = await open(ids, turnId);
    expect(stream).toEqual({ outboxId: expect.any(Number), platformMessageId: null });
    await recordStreamMessage(db.client.db, stream!.outboxId, '55');
    const committed = await commitTurn(db.client.db, commitOf(ids, turnId, ['part one', 'part two']));
    expect(committed.kind).toBe('committed');
    const rows = await outboxOf(ids.conversationId);
    expect(rows.map((r) => [Number(r.id) === stream!.outboxId, r.status, r.text, r.streamed, r.platform_message_id, r.chunk_index])).toEqual([
      [true, 'pending', 'part one', true, '55', 0],
      [false, 'pending', 'part two', false, null, 1],
    ]);
    // What the commit hands to delivery: both parts, the streamed one first with its message id.
    if (committed.kind === 'committed') expect(committed.outbox.map((r) => [r.text, r.streamed, r.platformMessageId])).toEqual([['part one', true, '55'], ['part two', false, null]]);
  });

  it('gives a resumed turn the message its cut-off turn left, and gives a turn no longer running nothing', async () => {
    const ids = await newConversation('702');
    const first = await begin(ids);
    const stream = await open(ids, first);
    await recordStreamMessage(db.client.db, stream!.outboxId, '77');
    await abandonTurn(db.client.db, first, 'lease_lost');
    expect(await open(ids, first)).toBeUndefined();
    const second = await begin(ids);
    expect(await open(ids, second)).toEqual({ outboxId: stream!.outboxId, platformMessageId: '77' });
    await commitTurn(db.client.db, commitOf(ids, second, ['the answer']));
    expect((await outboxOf(ids.conversationId)).map((r) => [r.status, r.text, r.platform_message_id])).toEqual([['pending', 'the answer', '77']]);
  });

  it('leaves the growing message to the turn that answers it, not to a chat command', async () => {
    const ids = await newConversation('703');
    const turnId = await begin(ids);
    await open(ids, turnId);
    await abandonTurn(db.client.db, turnId, 'lease_lost');
    await commitTurn(db.client.db, commitOf(ids, undefined, ['Nothing was running.']));
    expect((await outboxOf(ids.conversationId)).map((r) => [r.status, r.text])).toEqual([['streaming', ''], ['pending', 'Nothing was running.']]);
  });
});
