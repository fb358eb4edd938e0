import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationState, subscribeLifecycleEvents } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

/**
 * Lifecycle events (issue 16, defects 9 and 10): every session a worker starts is
 * announced with `session.started`; a suspension parks a session, it does not
 * end it, so it is announced as `session.parked`; `session.finalized` is kept
 * for sessions that are really over. The restart counter is set in SQL (the
 * restart tests show how it gets there); the worker's sweep applies the
 * restart rules within SWEEP_INTERVAL_MS.
 */
describe('session lifecycle events', () => {
  let system: TestSystem;
  let lifecycle: Awaited<ReturnType<typeof subscribeLifecycleEvents>>;

  beforeAll(async () => {
    system = await TestSystem.start({ workerEnv: { SWEEP_INTERVAL_MS: '300', RESTART_SUSPEND_THRESHOLD: '3' } });
    lifecycle = await subscribeLifecycleEvents(system);
  });
  afterAll(async () => {
    lifecycle?.close();
    await system?.close();
  });

  const sessionStatus = async (id: number) => (await system.sql<{ status: string; end_reason: string | null }[]>`select status, end_reason from sessions where id = ${id}`)[0];
  /** The reply is marked sent, which clears the counter: only after that does setting it stand. */
  const waitDelivered = (chatId: number) =>
    waitForCondition(`chat ${chatId} delivered`, async () => {
      const [row] = await system.sql<{ n: number }[]>`
        select count(*)::int as n from outbox o join conversations c on c.id = o.conversation_id where c.chat_id = ${String(chatId)} and o.status <> 'sent'`;
      return row?.n === 0;
    });

  it('announces a first session that /status starts', async () => {
    const chatId = 9602;
    await system.sendTelegram({ chatId, text: '/status' });
    const [reply] = await system.waitForTelegram(chatId, 1);
    const state = await conversationState(system, chatId);
    expect(reply?.text).toContain(`Session ${state.current_session_id}:`);
    const started = await lifecycle.waitFor('session.started', (e) => e.type === 'session.started' && e.conversationId === state.id);
    expect(started.sessionId).toBe(state.current_session_id);
  });

  it('parks the session on a first suspension and finalizes only the fresh session a second loop ends', async () => {
    const chatId = 9601;
    await system.sendTelegram({ chatId, text: 'hello' });
    await system.waitForTelegram(chatId, 1);
    await waitDelivered(chatId);
    const before = await conversationState(system, chatId);
    const parkedSession = before.current_session_id as number;
    await lifecycle.waitFor('session.started of the first session', (e) => e.type === 'session.started' && e.sessionId === parkedSession);

    await system.sql`update conversations set restart_count = 3 where id = ${before.id}`;
    await lifecycle.waitFor('conversation.suspended', (e) => e.type === 'conversation.suspended' && e.conversationId === before.id);
    const parked = await lifecycle.waitFor('session.parked', (e) => e.type === 'session.parked' && e.conversationId === before.id);
    expect(parked).toMatchObject({ sessionId: parkedSession, reason: 'restart_loop' });
    expect(await conversationState(system, chatId)).toMatchObject({ status: 'suspended', pre_suspend_session_id: parkedSession, current_session_id: null });
    expect(await sessionStatus(parkedSession)).toMatchObject({ status: 'active' });

    // The user goes on in a fresh session, which loops too: that session is finalized (the parked one stays for operators).
    await system.sendTelegram({ chatId, text: 'again' });
    await system.waitForTelegram(chatId, 2);
    await waitDelivered(chatId);
    const fresh = (await conversationState(system, chatId)).current_session_id as number;
    expect(fresh).not.toBe(parkedSession);
    await lifecycle.waitFor('session.started of the fresh session', (e) => e.type === 'session.started' && e.sessionId === fresh);
    await system.sql`update conversations set restart_count = 3 where id = ${before.id}`;
    const finalized = await lifecycle.waitFor('session.finalized', (e) => e.type === 'session.finalized' && e.conversationId === before.id);
    expect(finalized).toMatchObject({ sessionId: fresh, reason: 'restart_loop' });
    expect(await sessionStatus(fresh)).toMatchObject({ status: 'finalized', end_reason: 'restart_loop' });

    const events = lifecycle.of(before.id);
    expect(events.filter((e) => e.type === 'session.finalized').map((e) => e.sessionId)).toEqual([fresh]);
    expect(events.filter((e) => e.type === 'session.parked').map((e) => e.sessionId)).toEqual([parkedSession]);
  });
});
