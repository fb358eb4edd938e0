import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { storeInboundEvent } from './store-inbound.ts';
import { claimOutboxRow } from './outbox-store.ts';
import { claimStreamStep, openReplyStream, recordStreamMessage, releaseStreamStep, type StreamClaim } from './stream-store.ts';
import { registerWorker } from './worker-registry.ts';
import { beginTurn } from './turn-begin.ts';
import { commitTurn, type CommitTurnInput } from './turn-commit.ts';
import { ensureCurrentSession, loadConversation } from './turn-loaders.ts';
import { abandonTurn, settleRunningTurn, type StaleTurnRule } from './turn-endings.ts';

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

const settleRule: StaleTurnRule = {
  liveStatus: 'running', maxHeartbeatAgeMs: 5000,
  cutOff: { status: 'failed', error: 'cut_off_by_restart' }, superseded: { status: 'interrupted', error: 'lease_lost' },
};

/** The next lease holder: the running turn is superseded (its worker alive) or cut off, then the holder's turn begins. */
async function takeOver(ids: Ids, workerId: string): Promise<number> {
  await settleRunningTurn(db.client.db, ids.conversationId, settleRule);
  return begin(ids, workerId);
}

async function begin(ids: Ids, workerId = 'w1'): Promise<number> {
  const begun = await beginTurn(db.client.db, { conversationId: ids.conversationId, sessionId: ids.sessionId, workerId, suspendThreshold: 3, firstInputEventId: ids.eventId, maxRunningPerUser: 100 });
  if (begun.kind !== 'begun') throw new Error(`turn not begun: ${begun.kind}`);
  return begun.turnId;
}

const commitOf = (ids: Ids, turnId: number | undefined, chunks: string[], inboundEventIds = [ids.eventId]): CommitTurnInput => ({
  turnId, conversationId: ids.conversationId, sessionId: ids.sessionId, status: 'completed', inboundEventIds,
  messages: [], replies: [{ platform: 'telegram', target: { chat_id: 1 }, chunks }], claimFor: 'w1#1',
});

const open = (ids: Ids, turnId: number, claimId = 'w1#1') =>
  openReplyStream(db.client.db, { conversationId: ids.conversationId, turnId, platform: 'telegram', target: { chat_id: 1 }, claimId, deadAfterMs: 5000 });

function claimed(claim: StreamClaim): Extract<StreamClaim, { kind: 'claimed' }> {
  if (claim.kind !== 'claimed') throw new Error(`stream not claimed: ${claim.kind}`);
  return claim;
}

async function outboxOf(conversationId: number) {
  return db.client.db.$client<{ id: string; status: string; text: string; streamed: boolean; platform_message_id: string | null; chunk_index: number }[]>`
    select id, status, text, streamed, platform_message_id, chunk_index from outbox where conversation_id = ${conversationId} order by id`;
}

describe('openReplyStream and the commit', () => {
  it('makes the growing message the first part of the committed reply, with its message id; later parts are new rows', async () => {
    const ids = await newConversation('701');
    const turnId = await begin(ids);
    const stream = claimed(await open(ids, turnId));
    expect(stream).toEqual({ kind: 'claimed', outboxId: expect.any(Number), platformMessageId: null });
    await recordStreamMessage(db.client.db, stream.outboxId, '55');
    await releaseStreamStep(db.client.db, stream.outboxId, 'w1#1');
    const committed = await commitTurn(db.client.db, commitOf(ids, turnId, ['part one', 'part two']));
    expect(committed.kind).toBe('committed');
    const rows = await outboxOf(ids.conversationId);
    expect(rows.map((r) => [Number(r.id) === stream.outboxId, r.status, r.text, r.streamed, r.platform_message_id, r.chunk_index])).toEqual([
      [true, 'pending', 'part one', true, '55', 0],
      [false, 'pending', 'part two', false, null, 1],
    ]);
    // What the commit hands to delivery: both parts, the streamed one first with its message id.
    if (committed.kind === 'committed') expect(committed.outbox.map((r) => [r.text, r.streamed, r.platformMessageId])).toEqual([['part one', true, '55'], ['part two', false, null]]);
  });

  it('gives a resumed turn the message its cut-off turn left, and gives a turn no longer running nothing', async () => {
    const ids = await newConversation('702');
    const first = await begin(ids);
    const stream = claimed(await open(ids, first));
    await recordStreamMessage(db.client.db, stream.outboxId, '77');
    await releaseStreamStep(db.client.db, stream.outboxId, 'w1#1');
    await abandonTurn(db.client.db, first, 'lease_lost');
    expect(await open(ids, first)).toEqual({ kind: 'stale' });
    const second = await begin(ids);
    expect(await open(ids, second)).toEqual({ kind: 'claimed', outboxId: stream.outboxId, platformMessageId: '77' });
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

// Issue 29, defect 2: a superseded turn's stream never edits the message once another holding owns it, and the
// committed reply's delivery waits for an edit still in flight, so the user's last sight is the committed reply.
describe('the stream fence', () => {
  it('makes a takeover wait while the old holding edits, and stops the old holding for good after it', async () => {
    await registerWorker(db.client.db, { id: 'wa', hostname: 'test-host', pid: 11 });
    const ids = await newConversation('711');
    const first = await begin(ids, 'wa');
    const stream = claimed(await open(ids, first, 'wa#1'));
    await recordStreamMessage(db.client.db, stream.outboxId, '88');
    // The lease was lost: another holding begins the next turn while the first one's edit is in flight.
    const second = await takeOver(ids, 'wb');
    expect(await open(ids, second, 'wb#2')).toEqual({ kind: 'busy' });
    await releaseStreamStep(db.client.db, stream.outboxId, 'wa#1');
    expect(await open(ids, second, 'wb#2')).toEqual({ kind: 'claimed', outboxId: stream.outboxId, platformMessageId: '88' });
    // The first holding's next edit is refused: the message is no longer its turn's.
    expect(await claimStreamStep(db.client.db, { conversationId: ids.conversationId, turnId: first, claimId: 'wa#1', deadAfterMs: 5000, outboxId: stream.outboxId })).toEqual({ kind: 'stale' });
  });

  it('refuses the next edit of a superseded turn, and holds the commit\'s delivery while its edit is in flight', async () => {
    await registerWorker(db.client.db, { id: 'wc', hostname: 'test-host', pid: 12 });
    const ids = await newConversation('712');
    const first = await begin(ids, 'wc');
    const stream = claimed(await open(ids, first, 'wc#1'));
    await recordStreamMessage(db.client.db, stream.outboxId, '99');
    const second = await takeOver(ids, 'wd');
    // The superseded turn's edit began before: the commit of the turn that answers keeps its claim.
    const committed = await commitTurn(db.client.db, { ...commitOf(ids, second, ['the answer']), claimFor: 'wd#2' });
    expect(committed.kind === 'committed' && committed.outbox.map((r) => [r.text, r.claimedBy])).toEqual([['the answer', 'wc#1']]);
    expect(await claimOutboxRow(db.client.db, stream.outboxId, 'wd#2', 5000)).toBe(false);
    await releaseStreamStep(db.client.db, stream.outboxId, 'wc#1');
    expect(await claimOutboxRow(db.client.db, stream.outboxId, 'wd#2', 5000)).toBe(true);
    expect(await claimStreamStep(db.client.db, { conversationId: ids.conversationId, turnId: first, claimId: 'wc#1', deadAfterMs: 5000, outboxId: stream.outboxId })).toEqual({ kind: 'stale' });
  });

  it('voids the claim of a worker that stopped answering: its frozen edit does not hold the takeover', async () => {
    const ids = await newConversation('713');
    // 'ghost' never registered a heartbeat: like a worker declared dead.
    const first = await begin(ids, 'ghost');
    const stream = claimed(await open(ids, first, 'ghost#1'));
    const second = await takeOver(ids, 'we');
    expect(await open(ids, second, 'we#2')).toEqual({ kind: 'claimed', outboxId: stream.outboxId, platformMessageId: null });
  });
});
