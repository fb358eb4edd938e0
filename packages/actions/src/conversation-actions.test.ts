import { describe, expect, it } from 'vitest';
import {
  beginTurn,
  commitTurn,
  ensureCurrentSession,
  loadConversation,
  loadPendingInbound,
  storeInboundEvent,
  type CommitTurnInput,
  type DbExecutor,
} from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { useTestDbClient } from '@switchboard/db/testing';
import type { ActionEvent } from './action-events.ts';
import { createConversationActions } from './conversation-actions.ts';
import type { Door } from './door.ts';

const db = useTestDbClient({ max: 4 });
const log = createLogger('actions-test', 'silent');

function actionsWithEvents() {
  const events: ActionEvent[] = [];
  const actions = createConversationActions({ db: db.client.db, emit: async (event) => void events.push(event), log });
  return { actions, events };
}

/** The operator's door, recording what the audit row would say. */
function operator<T>(): Door<T> & { recorded: { outcome: T; superseded: number[] }[] } {
  const recorded: { outcome: T; superseded: number[] }[] = [];
  return { kind: 'operator', recorded, record: async (_tx: DbExecutor, outcome: T, superseded: number[]) => void recorded.push({ outcome, superseded }) };
}

async function newConversation(chatId: string) {
  const stored = await storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: 'bot', eventId: `e-${chatId}`, conversationKey: `telegram:bot:${chatId}::`,
    chatId, threadId: '', userScope: '', userId: `u${chatId}`, text: `hello from ${chatId}`, replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
  });
  const conversation = await loadConversation(db.client.db, stored.conversationId);
  const sessionId = await ensureCurrentSession(db.client.db, conversation!);
  return { conversationId: stored.conversationId, sessionId, eventId: stored.inboundEventId };
}

async function runningTurn(ids: { conversationId: number; sessionId: number; eventId: number }): Promise<number> {
  const begun = await beginTurn(db.client.db, {
    conversationId: ids.conversationId, sessionId: ids.sessionId, workerId: 'w', suspendThreshold: 3, firstInputEventId: ids.eventId, maxRunningPerUser: 10,
  });
  if (begun.kind !== 'begun') throw new Error(`turn not begun: ${begun.kind}`);
  return begun.turnId;
}

const answer = (ids: { conversationId: number; sessionId: number; eventId: number }, turnId: number): CommitTurnInput => ({
  turnId, conversationId: ids.conversationId, sessionId: ids.sessionId, status: 'completed', inboundEventIds: [ids.eventId],
  messages: [{ role: 'user', content: 'hello', tokens: 1, inboundEventId: ids.eventId }, { role: 'assistant', content: 'answer', tokens: 1 }],
  replies: [{ platform: 'telegram', target: {}, chunks: ['answer'] }],
});

async function turnRow(turnId: number) {
  const [row] = await db.client.db.$client<{ status: string; error: string | null }[]>`select status, error from turns where id = ${turnId}`;
  return row;
}

describe('conversation actions', () => {
  it('resets through the chat door: the old session finalized, a new one current, announced in that order', async () => {
    const ids = await newConversation('501');
    const { actions, events } = actionsWithEvents();
    const outcome = await actions.reset(ids.conversationId, 'new', { kind: 'chat' });
    if (outcome.kind !== 'reset') throw new Error(outcome.kind);
    expect(outcome.oldSessionId).toBe(ids.sessionId);
    expect((await loadConversation(db.client.db, ids.conversationId))?.currentSessionId).toBe(outcome.newSessionId);
    expect(events).toEqual([
      { type: 'session.finalized', conversationId: ids.conversationId, sessionId: ids.sessionId, reason: 'new' },
      { type: 'session.started', conversationId: ids.conversationId, sessionId: outcome.newSessionId },
    ]);
  });

  it('applies a chat /reset once per event: a second holding running the same command changes nothing (issue 29, defect 8)', async () => {
    const ids = await newConversation('511');
    const { actions, events } = actionsWithEvents();
    const door = { kind: 'chat' as const, inboundEventId: ids.eventId };
    const first = await actions.reset(ids.conversationId, 'reset', door);
    if (first.kind !== 'reset') throw new Error(first.kind);
    // The holding that lost the lease reads the same /reset (its event still pending: no commit took it yet).
    expect(await actions.reset(ids.conversationId, 'reset', door)).toEqual({ kind: 'already_applied' });
    expect((await loadConversation(db.client.db, ids.conversationId))?.currentSessionId).toBe(first.newSessionId);
    expect(events.filter((e) => e.type === 'session.started')).toHaveLength(1);
    // Likewise /busy: one change, the repeat a no-op.
    const busy = await newConversation('512');
    const busyDoor = { kind: 'chat' as const, inboundEventId: busy.eventId };
    expect(await actions.setBusyMode(busy.conversationId, 'queue', busyDoor)).toEqual({ kind: 'set', mode: 'queue' });
    expect(await actions.setBusyMode(busy.conversationId, 'queue', busyDoor)).toEqual({ kind: 'already_applied' });
  });

  it('applies nothing for a command whose event another holding already took', async () => {
    const ids = await newConversation('513');
    await db.client.db.$client`update inbound_events set status = 'done' where id = ${ids.eventId}`;
    const { actions } = actionsWithEvents();
    expect(await actions.reset(ids.conversationId, 'new', { kind: 'chat', inboundEventId: ids.eventId })).toEqual({ kind: 'already_applied' });
    expect((await loadConversation(db.client.db, ids.conversationId))?.currentSessionId).toBe(ids.sessionId);
  });

  it("supersedes the running turn of an operator's reset: its commit is refused and its input stays pending for the new session", async () => {
    const ids = await newConversation('502');
    const turnId = await runningTurn(ids);
    const { actions } = actionsWithEvents();
    const door = operator<Awaited<ReturnType<typeof actions.reset>>>();
    const outcome = await actions.reset(ids.conversationId, 'operator', door);
    expect(outcome.kind).toBe('reset');
    expect(door.recorded).toEqual([{ outcome, superseded: [turnId] }]);
    expect(await turnRow(turnId)).toEqual({ status: 'interrupted', error: 'superseded_by_operator' });
    expect(await commitTurn(db.client.db, answer(ids, turnId))).toEqual({ kind: 'stale' });
    expect(await loadPendingInbound(db.client.db, ids.conversationId, 10)).toHaveLength(1);
  });

  it('refuses the commit of a turn begun on the session an operator moved away from, even one begun after the reset', async () => {
    const ids = await newConversation('503');
    const { actions } = actionsWithEvents();
    await actions.suspend(ids.conversationId, 'operator', operator());
    // A worker that read the conversation before the suspension begins its turn on the parked session.
    const late = await runningTurn(ids);
    expect(await commitTurn(db.client.db, answer(ids, late))).toEqual({ kind: 'stale' });
    const [messages] = await db.client.db.$client<{ n: string }[]>`select count(*) as n from messages where session_id = ${ids.sessionId}`;
    expect(messages?.n).toBe('0');
  });

  it('lets a commit that got there first finish before the reset, never into the session after it', async () => {
    const ids = await newConversation('504');
    const turnId = await runningTurn(ids);
    const { actions } = actionsWithEvents();
    // The commit holds the turn row: the reset waits for it, then finds no running turn to supersede.
    const holder = await db.client.db.$client.reserve();
    try {
      await holder`begin`;
      await holder`select id from turns where id = ${turnId} for update`;
      const door = operator<Awaited<ReturnType<typeof actions.reset>>>();
      const reset = actions.reset(ids.conversationId, 'operator', door);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await holder`update turns set status = 'completed', ended_at = now() where id = ${turnId}`;
      await holder`commit`;
      expect((await reset).kind).toBe('reset');
      expect(door.recorded[0]?.superseded).toEqual([]);
    } finally {
      holder.release();
    }
    expect(await turnRow(turnId)).toEqual({ status: 'completed', error: null });
  });

  it('leaves the running turn alone when the action is refused', async () => {
    const ids = await newConversation('505');
    const { actions, events } = actionsWithEvents();
    expect((await actions.suspend(ids.conversationId, 'first', operator())).kind).toBe('suspended');
    const fresh = await actions.reset(ids.conversationId, 'operator', { kind: 'chat' });
    if (fresh.kind !== 'reset') throw new Error(fresh.kind);
    const turnId = await runningTurn({ ...ids, sessionId: fresh.newSessionId });
    const door = operator<Awaited<ReturnType<typeof actions.suspend>>>();
    expect(await actions.suspend(ids.conversationId, 'again', door)).toEqual({ kind: 'already_suspended', reason: 'first' });
    expect(door.recorded).toEqual([{ outcome: { kind: 'already_suspended', reason: 'first' }, superseded: [] }]);
    expect((await turnRow(turnId))?.status).toBe('running');
    expect(events.map((e) => e.type)).toEqual(['conversation.suspended', 'session.parked', 'session.started']);
  });

  it('resumes: the session started meanwhile finalized before the resume is announced, held input released', async () => {
    const ids = await newConversation('506');
    const { actions, events } = actionsWithEvents();
    await actions.suspend(ids.conversationId, 'operator', operator());
    await db.client.db.$client`update inbound_events set status = 'held' where conversation_id = ${ids.conversationId}`;
    const fresh = await ensureCurrentSession(db.client.db, (await loadConversation(db.client.db, ids.conversationId))!);
    events.length = 0;
    const outcome = await actions.resume(ids.conversationId, operator());
    expect(outcome).toEqual({ kind: 'resumed', conversationId: ids.conversationId, restoredSessionId: ids.sessionId, finalizedSessionId: fresh, releasedInput: 1 });
    expect(events).toEqual([
      { type: 'session.finalized', conversationId: ids.conversationId, sessionId: fresh, reason: 'resumed' },
      { type: 'conversation.resumed', conversationId: ids.conversationId, sessionId: ids.sessionId },
    ]);
  });

  it('suspends restart loops and announces them like a suspension: parked first, finalized when the fresh session loops again', async () => {
    const ids = await newConversation('507');
    const { actions, events } = actionsWithEvents();
    await db.client.db.$client`update conversations set restart_count = 3 where id = ${ids.conversationId}`;
    expect(await actions.suspendRestartLoops(3)).toContainEqual({ conversationId: ids.conversationId, sessionId: ids.sessionId, sessionEnd: 'parked', reason: 'restart_loop' });
    const fresh = await ensureCurrentSession(db.client.db, (await loadConversation(db.client.db, ids.conversationId))!);
    await db.client.db.$client`update conversations set restart_count = 3 where id = ${ids.conversationId}`;
    expect(await actions.suspendRestartLoops(3)).toContainEqual({ conversationId: ids.conversationId, sessionId: fresh, sessionEnd: 'finalized', reason: 'restart_loop' });
    const after = await loadConversation(db.client.db, ids.conversationId);
    expect(after).toMatchObject({ status: 'suspended', suspendReason: 'restart_loop', preSuspendSessionId: ids.sessionId, currentSessionId: null, restartCount: 0 });
    expect(events.filter((e) => e.conversationId === ids.conversationId)).toEqual([
      { type: 'conversation.suspended', conversationId: ids.conversationId, sessionId: ids.sessionId, reason: 'restart_loop' },
      { type: 'session.parked', conversationId: ids.conversationId, sessionId: ids.sessionId, reason: 'restart_loop' },
      { type: 'conversation.suspended', conversationId: ids.conversationId, sessionId: fresh, reason: 'restart_loop' },
      { type: 'session.finalized', conversationId: ids.conversationId, sessionId: fresh, reason: 'restart_loop' },
    ]);
  });

  it('deletes only with the right key, and sets the busy mode through either door', async () => {
    const ids = await newConversation('508');
    const { actions, events } = actionsWithEvents();
    expect(await actions.setBusyMode(ids.conversationId, 'queue', { kind: 'chat' })).toEqual({ kind: 'set', mode: 'queue' });
    expect(await actions.setBusyMode(999_999, null, operator())).toEqual({ kind: 'not_found' });
    expect((await loadConversation(db.client.db, ids.conversationId))?.busyMode).toBe('queue');
    expect(await actions.remove(ids.conversationId, 'wrong', operator())).toEqual({ kind: 'confirmation_mismatch' });
    expect((await actions.remove(ids.conversationId, 'telegram:bot:508::', operator())).kind).toBe('deleted');
    expect(await loadConversation(db.client.db, ids.conversationId)).toBeUndefined();
    expect(events).toEqual([{ type: 'session.finalized', conversationId: ids.conversationId, sessionId: ids.sessionId, reason: 'deleted' }]);
  });
});

describe('the runtime setting (issue 21)', () => {
  const actionsWith = (fullAccessAllowed: boolean) => createConversationActions({ db: db.client.db, emit: async () => undefined, log, fullAccessAllowed });

  it('sets the runtime and the profile through the operator door, each change audited with what it did', async () => {
    const ids = await newConversation('2201');
    const door = operator<Awaited<ReturnType<ReturnType<typeof actionsWith>['setRuntime']>>>();
    const actions = actionsWith(false);
    expect(await actions.setRuntime(ids.conversationId, { runtime: 'codex', permissionProfile: 'workspace-write' }, door)).toEqual({
      kind: 'set', runtime: 'codex', permissionProfile: 'workspace-write',
    });
    expect(await actions.setRuntime(987_654, { runtime: 'openai' }, door)).toEqual({ kind: 'not_found' });
    expect(door.recorded.map((r) => r.outcome.kind)).toEqual(['set', 'not_found']);
  });

  it('refuses full-access unless the operator setting allows it, and through the chat door always; a refusal changes nothing', async () => {
    const ids = await newConversation('2202');
    const door = operator<Awaited<ReturnType<ReturnType<typeof actionsWith>['setRuntime']>>>();
    expect(await actionsWith(false).setRuntime(ids.conversationId, { runtime: 'codex', permissionProfile: 'full-access' }, door)).toEqual({ kind: 'full_access_disabled' });
    expect(await actionsWith(true).setRuntime(ids.conversationId, { permissionProfile: 'full-access' }, { kind: 'chat' })).toEqual({ kind: 'full_access_disabled' });
    expect(await actionsWith(false).setRuntime(ids.conversationId, { permissionProfile: 'full-access-unattended' }, door)).toEqual({ kind: 'full_access_disabled' });
    expect(door.recorded.map((r) => r.outcome)).toEqual([{ kind: 'full_access_disabled' }, { kind: 'full_access_disabled' }]);
    expect(await actionsWith(true).setRuntime(ids.conversationId, { permissionProfile: 'full-access-unattended' }, { kind: 'chat' })).toEqual({ kind: 'full_access_disabled' });
    const [unchanged] = await db.client.db.$client<{ runtime: string | null; permission_profile: string | null }[]>`select runtime, permission_profile from conversations where id = ${ids.conversationId}`;
    expect(unchanged).toEqual({ runtime: null, permission_profile: null });
    expect(await actionsWith(true).setRuntime(ids.conversationId, { permissionProfile: 'full-access' }, door)).toEqual({ kind: 'set', runtime: null, permissionProfile: 'full-access' });
  });
});
