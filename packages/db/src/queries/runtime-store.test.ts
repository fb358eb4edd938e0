import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { suspendRestartLoops } from './restart-store.ts';
import { setConversationRuntime } from './runtime-store.ts';
import { resetConversationSession } from './session-store.ts';
import { suspendConversation } from './suspension-store.ts';
import { storeInboundEvent } from './store-inbound.ts';
import { beginTurn } from './turn-begin.ts';
import { commitTurn, type CommitTurnInput } from './turn-commit.ts';
import { ensureCurrentSession, loadConversation } from './turn-loaders.ts';
import { settleRunningTurn, type StaleTurnRule } from './turn-endings.ts';

// Issue 21: the runtime's thread kept on the session under the commit's fence,
// runtime crashes in a row counted and suspended like a restart loop, and the
// operator's per-conversation runtime setting.
const db = useTestDbClient({ max: 4 });
const threshold = 3;
/** Core's staleTurnRule(10_000), spelled out as turn-fence.test.ts does (packages/db does not depend on core). */
const settleRule: StaleTurnRule = {
  liveStatus: 'running', maxHeartbeatAgeMs: 10_000,
  cutOff: { status: 'failed', error: 'cut_off_by_restart' }, superseded: { status: 'interrupted', error: 'lease_lost' },
};
let nextEvent = 0;

async function newConversation(chatId: string) {
  const ids = await newInput(chatId);
  const conversation = await loadConversation(db.client.db, ids.conversationId);
  const sessionId = await ensureCurrentSession(db.client.db, conversation!);
  return { ...ids, sessionId };
}

async function newInput(chatId: string) {
  const stored = await storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: 'bot', eventId: `rt-${chatId}-${++nextEvent}`, conversationKey: `telegram:bot:${chatId}::`,
    chatId, threadId: '', userScope: '', userId: `u${chatId}`, text: 'hello', replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
  });
  return { conversationId: stored.conversationId, eventId: stored.inboundEventId };
}

async function begin(ids: { conversationId: number; sessionId: number; eventId: number }) {
  return beginTurn(db.client.db, { conversationId: ids.conversationId, sessionId: ids.sessionId, workerId: 'w', suspendThreshold: threshold, firstInputEventId: ids.eventId, maxRunningPerUser: 100 });
}

const endOf = (ids: { conversationId: number; sessionId: number; eventId: number }, turnId: number, extra: Partial<CommitTurnInput>): CommitTurnInput => ({
  turnId, conversationId: ids.conversationId, sessionId: ids.sessionId, status: 'completed', inboundEventIds: [ids.eventId],
  messages: [{ role: 'user', content: 'hello', tokens: 1, inboundEventId: ids.eventId }], replies: [], ...extra,
});

/** One turn on fresh input of the conversation, committed with `extra`. */
async function playTurn(chatId: string, sessionId: number, extra: Partial<CommitTurnInput>) {
  const ids = { ...(await newInput(chatId)), sessionId };
  const begun = await begin(ids);
  if (begun.kind !== 'begun') return begun;
  return commitTurn(db.client.db, endOf(ids, begun.turnId, extra));
}

async function threadOf(sessionId: number): Promise<string | null> {
  const [row] = await db.client.db.$client<{ runtime_thread_id: string | null }[]>`select runtime_thread_id from sessions where id = ${sessionId}`;
  return row?.runtime_thread_id ?? null;
}

async function conversationRow(id: number) {
  const [row] = await db.client.db.$client<{ status: string; suspend_reason: string | null; runtime_crash_streak: number; current_session_id: string | null; pre_suspend_session_id: string | null }[]>`
    select status, suspend_reason, runtime_crash_streak, current_session_id, pre_suspend_session_id from conversations where id = ${id}`;
  return row;
}

describe("the runtime's thread on the session", () => {
  it('is stored by the commit and kept by a later commit that names none', async () => {
    const ids = await newConversation('2101');
    const begun = await begin(ids);
    if (begun.kind !== 'begun') throw new Error(begun.kind);
    expect((await commitTurn(db.client.db, endOf(ids, begun.turnId, { runtimeThreadId: 'thr-1' }))).kind).toBe('committed');
    expect(await threadOf(ids.sessionId)).toBe('thr-1');
    expect((await playTurn('2101', ids.sessionId, {}))?.kind).toBe('committed');
    expect(await threadOf(ids.sessionId)).toBe('thr-1');
    expect((await playTurn('2101', ids.sessionId, { runtimeThreadId: 'thr-2' }))?.kind).toBe('committed');
    expect(await threadOf(ids.sessionId)).toBe('thr-2');
  });

  it('is never written by a superseded turn', async () => {
    const ids = await newConversation('2102');
    const begun = await begin(ids);
    if (begun.kind !== 'begun') throw new Error(begun.kind);
    // Its worker was never registered, so it counts as dead: cut off, and its commit refused.
    await settleRunningTurn(db.client.db, ids.conversationId, settleRule);
    expect(await commitTurn(db.client.db, endOf(ids, begun.turnId, { runtimeThreadId: 'thr-stale' }))).toEqual({ kind: 'stale' });
    expect(await threadOf(ids.sessionId)).toBeNull();
  });

  it('has seen the transcript up to the last seq of a commit whose input it received, never of one it did not (docs/codex.md, "Threads")', async () => {
    const ids = await newConversation('2199');
    const synced = async () =>
      (await db.client.db.$client<{ runtime_synced_seq: number; last_seq: number }[]>`select runtime_synced_seq, last_seq from sessions where id = ${ids.sessionId}`)[0];
    const begun = await begin(ids);
    if (begun.kind !== 'begun') throw new Error(begun.kind);
    const twoMessages = [{ role: 'user' as const, content: 'hello', tokens: 1, inboundEventId: ids.eventId }, { role: 'assistant' as const, content: 'hi', tokens: 1 }];
    await commitTurn(db.client.db, endOf(ids, begun.turnId, { runtimeThreadId: 'thr-1', runtimeSynced: true, messages: twoMessages }));
    expect(await synced()).toEqual({ runtime_synced_seq: 2, last_seq: 2 });
    // Stopped before Codex had its input: stored, the mark stays.
    expect((await playTurn('2199', ids.sessionId, { runtimeThreadId: 'thr-1', status: 'cancelled' }))?.kind).toBe('committed');
    expect(await synced()).toEqual({ runtime_synced_seq: 2, last_seq: 3 });
    expect((await playTurn('2199', ids.sessionId, { runtimeThreadId: 'thr-1', runtimeSynced: true }))?.kind).toBe('committed');
    expect(await synced()).toEqual({ runtime_synced_seq: 4, last_seq: 4 });
  });
});

describe('runtime crashes in a row', () => {
  const crashed: Partial<CommitTurnInput> = { status: 'failed', error: 'RUNTIME_CRASHED', crashStreak: 'increment' };

  it('are counted by the commit and cleared by a completed turn; other endings leave the count', async () => {
    const ids = await newConversation('2103');
    const streaks: (number | null)[] = [];
    for (const extra of [crashed, crashed, { status: 'cancelled' as const, crashStreak: 'keep' as const }, { crashStreak: 'reset' as const }, crashed]) {
      const result = await playTurn('2103', ids.sessionId, extra);
      streaks.push(result && 'crashStreak' in result ? result.crashStreak : -1);
    }
    expect(streaks).toEqual([1, 2, null, 0, 1]);
    expect((await conversationRow(ids.conversationId))?.runtime_crash_streak).toBe(1);
  });

  it('suspend the conversation at the threshold like a restart loop, and no turn starts there before', async () => {
    const ids = await newConversation('2104');
    for (let i = 0; i < threshold; i++) await playTurn('2104', ids.sessionId, crashed);
    expect((await conversationRow(ids.conversationId))?.runtime_crash_streak).toBe(threshold);
    // A turn at the threshold is refused in its insert, exactly as at the restart threshold.
    expect(await begin({ ...(await newInput('2104')), sessionId: ids.sessionId })).toEqual({ kind: 'restart_loop' });
    const suspended = (await suspendRestartLoops(db.client.db, threshold)).filter((s) => s.conversationId === ids.conversationId);
    expect(suspended).toEqual([{ conversationId: ids.conversationId, sessionId: ids.sessionId, sessionEnd: 'parked', reason: 'runtime_crash_loop' }]);
    expect(await conversationRow(ids.conversationId)).toMatchObject({
      status: 'suspended', suspend_reason: 'runtime_crash_loop', runtime_crash_streak: 0, current_session_id: null, pre_suspend_session_id: String(ids.sessionId),
    });
    // The input no turn took (the first message and the refused turn's) is held back until an operator resumes.
    const input = await db.client.db.$client<{ status: string }[]>`select status from inbound_events where conversation_id = ${ids.conversationId} order by id`;
    expect(input.map((e) => e.status)).toEqual(['held', 'done', 'done', 'done', 'held']);
  });

  it('start over with a reset or an operator suspension, as the restart counter does', async () => {
    const ids = await newConversation('2106');
    await playTurn('2106', ids.sessionId, crashed);
    await resetConversationSession(db.client.db, ids.conversationId, 'reset');
    expect((await conversationRow(ids.conversationId))?.runtime_crash_streak).toBe(0);
    await db.client.db.$client`update conversations set runtime_crash_streak = 2 where id = ${ids.conversationId}`;
    await suspendConversation(db.client.db, ids.conversationId, 'operator');
    expect((await conversationRow(ids.conversationId))?.runtime_crash_streak).toBe(0);
  });
});

describe('setConversationRuntime', () => {
  it('changes only what it is given, null meaning the default, and says when there is no conversation', async () => {
    const ids = await newConversation('2105');
    expect(await setConversationRuntime(db.client.db, ids.conversationId, { runtime: 'codex' })).toEqual({ runtime: 'codex', permissionProfile: null });
    expect(await setConversationRuntime(db.client.db, ids.conversationId, { permissionProfile: 'workspace-write' })).toEqual({ runtime: 'codex', permissionProfile: 'workspace-write' });
    expect(await setConversationRuntime(db.client.db, ids.conversationId, { runtime: null })).toEqual({ runtime: null, permissionProfile: 'workspace-write' });
    expect(await setConversationRuntime(db.client.db, 987_654_321, { runtime: 'codex' })).toBeUndefined();
  });
});
