import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { claimOutboxRow, markOutboxSent, outboxClaimId, releaseOutboxClaims } from './outbox-store.ts';
import { suspendRestartLoops } from './restart-store.ts';
import { acknowledgeRecoveryNote, acknowledgeResumeNote } from './session-store.ts';
import { claimDeadWorkers, markWorkerStatus, registerWorker } from './worker-registry.ts';
import { beginTurn } from './turn-begin.ts';
import { commitTurn, type CommitTurnInput } from './turn-commit.ts';
import { ensureCurrentSession, loadConversation, loadPendingInbound } from './turn-loaders.ts';
import { abandonTurn, cutOffRunningTurns, settleRunningTurn, type StaleTurnRule } from './turn-endings.ts';
import { storeInboundEvent } from './store-inbound.ts';

// Issue 16, defects 2 and 7: a worker that lost the conversation commits nothing,
// and neither a turn nor a suspension happens behind the current holder's back.
const db = useTestDbClient({ max: 6 });
const threshold = 3;
/** Core's staleTurnRule(10_000), spelled out: packages/db does not depend on core (sql-rules.test.ts checks the two agree). */
const settleRule: StaleTurnRule = {
  liveStatus: 'running', maxHeartbeatAgeMs: 10_000,
  cutOff: { status: 'failed', error: 'cut_off_by_restart' }, superseded: { status: 'interrupted', error: 'lease_lost' },
};

async function newConversation(chatId: string, userId = 'u1') {
  const stored = await storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: 'bot', eventId: `e-${chatId}`, conversationKey: `telegram:bot:${chatId}::`,
    chatId, threadId: '', userScope: '', userId, text: `hello from ${chatId}`, replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
  });
  const conversation = await loadConversation(db.client.db, stored.conversationId);
  const sessionId = await ensureCurrentSession(db.client.db, conversation!);
  return { conversationId: stored.conversationId, sessionId, eventId: stored.inboundEventId };
}

/** Every conversation here is user u1's unless said otherwise: a limit high enough not to matter outside its own tests. */
const noUserLimit = 1_000;

const beginArgs = (ids: { conversationId: number; sessionId: number; eventId: number }, workerId: string, maxRunningPerUser = noUserLimit) => ({
  conversationId: ids.conversationId, sessionId: ids.sessionId, workerId, suspendThreshold: threshold, firstInputEventId: ids.eventId, maxRunningPerUser,
});

async function begin(ids: { conversationId: number; sessionId: number; eventId: number }, workerId: string): Promise<number> {
  const begun = await beginTurn(db.client.db, beginArgs(ids, workerId));
  if (begun.kind !== 'begun') throw new Error(`turn not begun: ${begun.kind}`);
  return begun.turnId;
}

const reply = (ids: { conversationId: number; sessionId: number; eventId: number }, turnId: number | undefined, text: string): CommitTurnInput => ({
  turnId, conversationId: ids.conversationId, sessionId: ids.sessionId, status: 'completed', inboundEventIds: [ids.eventId],
  messages: [{ role: 'user', content: 'hello', tokens: 1, inboundEventId: ids.eventId }, { role: 'assistant', content: text, tokens: 1 }],
  replies: [{ platform: 'telegram', target: {}, chunks: [text] }],
});

async function stored(conversationId: number) {
  const messages = await db.client.db.$client<{ content: string }[]>`select m.content from messages m join sessions s on s.id = m.session_id where s.conversation_id = ${conversationId} order by m.id`;
  const outbox = await db.client.db.$client<{ text: string }[]>`select text from outbox where conversation_id = ${conversationId} order by id`;
  const turns = await db.client.db.$client<{ status: string; cut_off: boolean }[]>`select status, cut_off_at is not null as cut_off from turns where conversation_id = ${conversationId} order by id`;
  const [conversation] = await db.client.db.$client<{ restart_count: number; status: string }[]>`select restart_count, status from conversations where id = ${conversationId}`;
  return { messages: messages.map((m) => m.content), outbox: outbox.map((o) => o.text), turns: turns.map((t) => `${t.status}${t.cut_off ? '+cut' : ''}`), ...conversation };
}

describe('the fenced commit', () => {
  it('begins no turn for a worker declared dead: a stalled worker that wakes takes nothing it could leave running (issue 29)', async () => {
    const ids = await newConversation('399');
    await registerWorker(db.client.db, { id: 'zombie-z', hostname: 'h', pid: 9 });
    await db.client.db.$client`update workers set heartbeat_at = now() - interval '1 minute' where id = 'zombie-z'`;
    expect(await claimDeadWorkers(db.client.db, { deadAfterMs: 5000, callerId: 'peer' })).toContain('zombie-z');
    expect(await beginTurn(db.client.db, beginArgs(ids, 'zombie-z'))).toEqual({ kind: 'declared_dead' });
    expect((await stored(ids.conversationId)).turns).toEqual([]);
    // A live worker begins the same input as before.
    await registerWorker(db.client.db, { id: 'live-l', hostname: 'h', pid: 10 });
    expect((await beginTurn(db.client.db, beginArgs(ids, 'live-l'))).kind).toBe('begun');
  });

  it('cuts off, at the next sweep, a turn begun while its worker was being declared dead', async () => {
    const ids = await newConversation('398');
    await registerWorker(db.client.db, { id: 'racer-r', hostname: 'h', pid: 11 });
    await begin(ids, 'racer-r');
    // Declared dead after the begin committed, but its cut-off ran before (it did not see the turn).
    await db.client.db.$client`update workers set status = 'dead' where id = 'racer-r'`;
    expect(await cutOffRunningTurns(db.client.db, { deadWorkers: true }, settleRule.cutOff)).toEqual([ids.conversationId]);
    expect((await stored(ids.conversationId)).turns).toEqual(['failed+cut']);
  });

  it('refuses the turn of a worker that lost the lease once the new holder settled it, and writes nothing of it', async () => {
    const ids = await newConversation('301');
    await registerWorker(db.client.db, { id: 'alive-a', hostname: 'h', pid: 1 });
    const stale = await begin(ids, 'alive-a');
    // The new holder finds A's turn running; A is alive (a Redis failover, not a crash): superseded, no restart.
    expect(await settleRunningTurn(db.client.db, ids.conversationId, settleRule)).toEqual({ cutOff: 0, superseded: 1 });
    const current = await begin(ids, 'holder-b');
    expect((await commitTurn(db.client.db, reply(ids, current, 'answer from B'))).kind).toBe('committed');
    expect(await commitTurn(db.client.db, reply(ids, stale, 'answer from A'))).toEqual({ kind: 'stale' });
    expect(await stored(ids.conversationId)).toMatchObject({
      messages: ['hello', 'answer from B'], outbox: ['answer from B'], turns: ['interrupted', 'completed'], restart_count: 0,
    });
  });

  it('refuses a turn that was cut off by a restart: never both cut off and completed', async () => {
    const ids = await newConversation('302');
    const turnId = await begin(ids, 'dead-worker'); // never registered: no heartbeat, so dead
    expect(await settleRunningTurn(db.client.db, ids.conversationId, settleRule)).toEqual({ cutOff: 1, superseded: 0 });
    expect(await commitTurn(db.client.db, reply(ids, turnId, 'late'))).toEqual({ kind: 'stale' });
    expect(await stored(ids.conversationId)).toMatchObject({ messages: [], outbox: [], turns: ['failed+cut'], restart_count: 1 });
    expect(await loadPendingInbound(db.client.db, ids.conversationId, 10)).toHaveLength(1);
  });

  it('records on the pending /stop the turn it cancelled, in the commit, and only if the commit holds', async () => {
    const ids = await newConversation('351');
    const stop = await storeInboundEvent(db.client.db, {
      platform: 'telegram', accountId: 'bot', eventId: 'e-351-stop', conversationKey: 'telegram:bot:351::',
      chatId: '351', threadId: '', userScope: '', userId: 'u1', text: '/stop', replyTarget: { chat_id: 351 }, refuseAtPending: null,
    });
    const turnId = await begin(ids, 'holder-a');
    const cancelled: CommitTurnInput = { ...reply(ids, turnId, 'unused'), status: 'cancelled', replies: [], stoppedByEventId: stop.inboundEventId };
    expect((await commitTurn(db.client.db, cancelled)).kind).toBe('committed');
    const [event] = await db.client.db.$client<{ turn_id: string | null; status: string }[]>`select turn_id, status from inbound_events where id = ${stop.inboundEventId}`;
    expect(event).toEqual({ turn_id: String(turnId), status: 'pending' });
    // A refused commit records nothing.
    const other = await newConversation('352');
    const stop2 = await storeInboundEvent(db.client.db, {
      platform: 'telegram', accountId: 'bot', eventId: 'e-352-stop', conversationKey: 'telegram:bot:352::',
      chatId: '352', threadId: '', userScope: '', userId: 'u1', text: '/stop', replyTarget: { chat_id: 352 }, refuseAtPending: null,
    });
    const cut = await begin(other, 'dead-worker-352');
    await settleRunningTurn(db.client.db, other.conversationId, settleRule);
    expect(await commitTurn(db.client.db, { ...reply(other, cut, 'x'), status: 'cancelled', replies: [], stoppedByEventId: stop2.inboundEventId })).toEqual({ kind: 'stale' });
    const [untouched] = await db.client.db.$client<{ turn_id: string | null }[]>`select turn_id from inbound_events where id = ${stop2.inboundEventId}`;
    expect(untouched?.turn_id).toBeNull();
  });

  it('lets exactly one of two racing commits take the same input', async () => {
    const ids = await newConversation('303');
    const results = await Promise.all([commitTurn(db.client.db, reply(ids, undefined, 'one')), commitTurn(db.client.db, reply(ids, undefined, 'two'))]);
    expect(results.map((r) => r.kind).sort()).toEqual(['committed', 'stale']);
    const after = await stored(ids.conversationId);
    expect(after.messages).toHaveLength(2);
    expect(after.outbox).toHaveLength(1);
  });

  it('counts the turn of a stopping worker as cut off by the restart, not superseded', async () => {
    // A graceful stop releases the lease of a turn it cut off before it records the cut-off itself.
    const ids = await newConversation('307');
    await registerWorker(db.client.db, { id: 'stopping-d', hostname: 'h', pid: 1 });
    await markWorkerStatus(db.client.db, 'stopping-d', 'stopping');
    await begin(ids, 'stopping-d');
    expect(await settleRunningTurn(db.client.db, ids.conversationId, settleRule)).toEqual({ cutOff: 1, superseded: 0 });
    expect(await stored(ids.conversationId)).toMatchObject({ turns: ['failed+cut'], restart_count: 1 });
  });

  it("refuses a turn whose session is no longer the conversation's current one (an operator moved it: issue 20)", async () => {
    const ids = await newConversation('309');
    const turnId = await begin(ids, 'w');
    await db.client.db.$client`update conversations set current_session_id = null, pre_suspend_session_id = ${ids.sessionId}, status = 'suspended' where id = ${ids.conversationId}`;
    expect(await commitTurn(db.client.db, reply(ids, turnId, 'late'))).toEqual({ kind: 'stale' });
    expect(await stored(ids.conversationId)).toMatchObject({ messages: [], outbox: [], turns: ['running'] });
    expect(await loadPendingInbound(db.client.db, ids.conversationId, 10)).toHaveLength(1);
  });

  it('leaves a turn its worker abandoned uncounted, and its input pending', async () => {
    const ids = await newConversation('304');
    const turnId = await begin(ids, 'w');
    await abandonTurn(db.client.db, turnId, 'lease_lost');
    expect(await stored(ids.conversationId)).toMatchObject({ turns: ['interrupted'], restart_count: 0 });
    expect(await commitTurn(db.client.db, reply(ids, turnId, 'late'))).toEqual({ kind: 'stale' });
    expect(await loadPendingInbound(db.client.db, ids.conversationId, 10)).toHaveLength(1);
  });
});

describe('the notes\' acknowledgements', () => {
  it('only a turn still running acknowledges the recovery or resume note: a superseded or cut-off holder writes nothing (issue 29, check (d))', async () => {
    const ids = await newConversation('398');
    await registerWorker(db.client.db, { id: 'ack-a', hostname: 'h', pid: 8 });
    const ackOf = async () => (await db.client.db.$client<{ key: string | null; owed: boolean }[]>`select recovery_ack_key as key, resume_owed as owed from sessions where id = ${ids.sessionId}`)[0];
    const stale = await begin(ids, 'ack-a');
    await settleRunningTurn(db.client.db, ids.conversationId, settleRule);
    await db.client.db.$client`update sessions set resume_owed = true where id = ${ids.sessionId}`;
    // The old holder's answer arrives after its turn was settled: nothing is acknowledged.
    await acknowledgeRecoveryNote(db.client.db, { sessionId: ids.sessionId, tailKey: 'tail-old', turnId: stale });
    await acknowledgeResumeNote(db.client.db, { sessionId: ids.sessionId, turnId: stale });
    expect(await ackOf()).toEqual({ key: null, owed: true });
    // The current holder's running turn acknowledges both.
    const current = await begin(ids, 'ack-a');
    await acknowledgeRecoveryNote(db.client.db, { sessionId: ids.sessionId, tailKey: 'tail-new', turnId: current });
    await acknowledgeResumeNote(db.client.db, { sessionId: ids.sessionId, turnId: current });
    expect(await ackOf()).toEqual({ key: 'tail-new', owed: false });
  });
});

describe('the restart threshold', () => {
  it('counts only consecutive cut-offs: a completed turn clears the count at its commit, even if its reply is never delivered', async () => {
    const ids = await newConversation('307');
    await begin(ids, 'dead-1');
    await settleRunningTurn(db.client.db, ids.conversationId, settleRule);
    const resumed = await begin(ids, 'holder-1');
    expect((await commitTurn(db.client.db, reply(ids, resumed, 'answered'))).kind).toBe('committed');
    // Its reply is not delivered (the platform refused it, or the worker died first): the conversation is idle, answered.
    expect((await stored(ids.conversationId)).restart_count).toBe(0);
    const later = await storeInboundEvent(db.client.db, {
      platform: 'telegram', accountId: 'bot', eventId: 'e-307-later', conversationKey: 'telegram:bot:307::',
      chatId: '307', threadId: '', userScope: '', userId: 'u1', text: 'later', replyTarget: { chat_id: 307 }, refuseAtPending: null,
    });
    await begin({ ...ids, eventId: later.inboundEventId }, 'dead-2');
    await settleRunningTurn(db.client.db, ids.conversationId, settleRule);
    expect((await stored(ids.conversationId)).restart_count).toBe(1);
  });

  it('refuses to begin a turn at the threshold, and a second running turn', async () => {
    const ids = await newConversation('305');
    await begin(ids, 'w1');
    expect(await beginTurn(db.client.db, beginArgs(ids, 'w2'))).toEqual({ kind: 'occupied' });
    await settleRunningTurn(db.client.db, ids.conversationId, settleRule);
    await db.client.db.$client`update conversations set restart_count = ${threshold} where id = ${ids.conversationId}`;
    expect(await beginTurn(db.client.db, beginArgs(ids, 'w2'))).toEqual({ kind: 'restart_loop' });
  });

  it('never suspends a conversation under a running turn, and suspends it in one step once none runs', async () => {
    const ids = await newConversation('306');
    await registerWorker(db.client.db, { id: 'alive-c', hostname: 'h', pid: 1 });
    await begin(ids, 'alive-c');
    await db.client.db.$client`update conversations set restart_count = ${threshold} where id = ${ids.conversationId}`;
    expect((await suspendRestartLoops(db.client.db, threshold)).map((s) => s.conversationId)).not.toContain(ids.conversationId);
    expect((await stored(ids.conversationId)).status).toBe('active');
    await settleRunningTurn(db.client.db, ids.conversationId, settleRule);
    expect(await suspendRestartLoops(db.client.db, threshold)).toContainEqual({ conversationId: ids.conversationId, sessionId: ids.sessionId, sessionEnd: 'parked', reason: 'restart_loop' });
    expect(await stored(ids.conversationId)).toMatchObject({ status: 'suspended', restart_count: 0 });
    const [held] = await db.client.db.$client<{ status: string }[]>`select status from inbound_events where id = ${ids.eventId}`;
    expect(held?.status).toBe('held');
  });
});

describe('the outbox claim', () => {
  it('lets one live holding send a row; a dead or stopped worker’s claim, or a released one, is void', async () => {
    const ids = await newConversation('308');
    await registerWorker(db.client.db, { id: 'sender-a', hostname: 'h', pid: 1 });
    await registerWorker(db.client.db, { id: 'sender-b', hostname: 'h', pid: 2 });
    const [a, a2, b] = [outboxClaimId('sender-a', 'lease-1'), outboxClaimId('sender-a', 'lease-2'), outboxClaimId('sender-b', 'lease-3')];
    const committed = await commitTurn(db.client.db, { ...reply(ids, undefined, 'the reply'), claimFor: a });
    if (committed.kind !== 'committed') throw new Error('not committed');
    const row = committed.outbox[0]!;
    expect(row.claimedBy).toBe(a);
    expect(await claimOutboxRow(db.client.db, row.id, b, 10_000)).toBe(false);
    // Another holding in the same worker process (it took the lease again after losing it) is another sender.
    expect(await claimOutboxRow(db.client.db, row.id, a2, 10_000)).toBe(false);
    expect(await claimOutboxRow(db.client.db, row.id, a, 10_000)).toBe(true);
    await releaseOutboxClaims(db.client.db, [row.id], a);
    expect(await claimOutboxRow(db.client.db, row.id, b, 10_000)).toBe(true);
    await markWorkerStatus(db.client.db, 'sender-b', 'stopped');
    expect(await claimOutboxRow(db.client.db, row.id, a, 10_000)).toBe(true);
    // sender-a's heartbeat is a minute old: dead, so its claim is void.
    await db.client.db.$client`update workers set heartbeat_at = now() - interval '1 minute' where id = 'sender-a'`;
    await registerWorker(db.client.db, { id: 'sender-c', hostname: 'h', pid: 3 });
    const c = outboxClaimId('sender-c', 'lease-4');
    expect(await claimOutboxRow(db.client.db, row.id, c, 10_000)).toBe(true);
    await markOutboxSent(db.client.db, row.id, 'm1');
    expect(await claimOutboxRow(db.client.db, row.id, c, 10_000)).toBe(false);
  });
});

// Issue 17, defect 3: one user's turns running at once, across workers, held to USER_MAX_RUNNING_TURNS.
describe('the per-user limit', () => {
  it('begins up to the limit for one user, refuses the next as user_busy, and lets another user begin', async () => {
    const mine = await Promise.all(['401', '402', '403'].map((chat) => newConversation(chat, 'u401')));
    const other = await newConversation('404', 'u404');
    const [a, b, c] = mine as [typeof other, typeof other, typeof other];
    expect((await beginTurn(db.client.db, beginArgs(a, 'w', 2))).kind).toBe('begun');
    expect((await beginTurn(db.client.db, beginArgs(b, 'w', 2))).kind).toBe('begun');
    expect(await beginTurn(db.client.db, beginArgs(c, 'w', 2))).toEqual({ kind: 'user_busy' });
    expect((await beginTurn(db.client.db, beginArgs(other, 'w', 2))).kind).toBe('begun');
    // Nothing was written for the refused one: its input is still pending and no turn row exists.
    expect(await stored(c.conversationId)).toMatchObject({ turns: [] });
    expect(await loadPendingInbound(db.client.db, c.conversationId, 10)).toHaveLength(1);
  });

  it('gives a slot back when the turn ends, however it ends', async () => {
    const [a, b] = await Promise.all(['411', '412'].map((chat) => newConversation(chat, 'u411')));
    const first = await beginTurn(db.client.db, beginArgs(a!, 'w', 1));
    expect(await beginTurn(db.client.db, beginArgs(b!, 'w', 1))).toEqual({ kind: 'user_busy' });
    await abandonTurn(db.client.db, first.kind === 'begun' ? first.turnId : 0, 'lease_lost');
    expect((await beginTurn(db.client.db, beginArgs(b!, 'w', 1))).kind).toBe('begun');
    const [slots] = await db.client.db.$client<{ user_key: string; running: string }[]>`
      select user_key, count(*) filter (where status = 'running') as running from turns where conversation_id in (${a!.conversationId}, ${b!.conversationId}) group by user_key`;
    expect(slots).toEqual({ user_key: 'telegram:bot:u411', running: '1' });
  });

  it('lets exactly the limit through when many workers begin turns of one user at the same moment', async () => {
    const limit = 3;
    for (let round = 0; round < 5; round++) {
      const user = `u42${round}`;
      const conversations = await Promise.all(Array.from({ length: 12 }, (_, i) => newConversation(`42${round}${String(i).padStart(2, '0')}`, user)));
      const results = await Promise.all(conversations.map((ids, i) => beginTurn(db.client.db, beginArgs(ids, `w${i}`, limit))));
      // Never more than the limit; and a lost race for a slot tries the next one, so the limit is reached, not undercut.
      expect(results.filter((r) => r.kind === 'begun')).toHaveLength(limit);
      expect(results.filter((r) => r.kind === 'user_busy')).toHaveLength(conversations.length - limit);
      const [row] = await db.client.db.$client<{ running: string }[]>`select count(*) as running from turns where user_key = ${`telegram:bot:${user}`} and status = 'running'`;
      expect(Number(row?.running)).toBe(limit);
    }
  });

  it('tries the next slot when another worker took the free one a moment before it', async () => {
    const [mine, racer] = await Promise.all([newConversation('440', 'u440'), newConversation('441', 'u440')]);
    // The other worker's insert of slot 1, not yet committed: invisible to the check, but it holds the slot's index entry.
    const other = await db.client.db.$client.reserve();
    try {
      await other`begin`;
      await other`insert into turns (conversation_id, session_id, worker_id, status, user_key, user_slot)
        values (${racer.conversationId}, ${racer.sessionId}, 'other', 'running', 'telegram:bot:u440', 1)`;
      const pending = beginTurn(db.client.db, beginArgs(mine, 'w', 3));
      const waiting = async () => (await db.client.db.$client<{ n: string }[]>`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%insert into turns%'`)[0]?.n === '1';
      while (!(await waiting())) await new Promise((resolve) => setTimeout(resolve, 10));
      await other`commit`;
      expect((await pending).kind).toBe('begun');
    } finally {
      other.release();
    }
    const slots = await db.client.db.$client<{ user_slot: number }[]>`select user_slot from turns where user_key = 'telegram:bot:u440' and status = 'running' order by user_slot`;
    expect(slots.map((r) => r.user_slot)).toEqual([1, 2]);
  });
});

