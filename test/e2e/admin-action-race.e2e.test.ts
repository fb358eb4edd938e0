import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv, aliceToken } from '../support/admin-client.ts';
import { conversationState, fastRestartEnv, slowRule, subscribeLifecycleEvents, turnsOf, waitForRunningTurn } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { loadChat, modelRequests, sendText, sentTo, waitForCondition, waitForIdle, waitForModelRequest, type ChatSnapshot } from '../support/turn-helpers.ts';

/**
 * Issue 20: an operator's action racing a running turn. The admin API acts
 * outside the conversation's lease, so suspend, resume, reset and delete are
 * fenced like a commit: the running turn is superseded in the action's own
 * transaction and stopped, its commit is refused (nothing of it lands in the
 * session the action moved away from, and its streamed answer is never
 * sent), and its input, still pending, is answered once, in the session the
 * action left current. What the user sees: one answer to the question.
 */

const question = (chat: number) => `c${chat}:slow question`;
const hello = (chat: number) => `c${chat}:hello`;
const chats = { reset: 46_001, suspend: 46_002, remove: 46_003 };

let system: TestSystem;
beforeAll(async () => {
  system = await TestSystem.start({ workers: 1, gatewayEnv: { ADMIN_TOKEN: adminTokenEnv }, workerEnv: fastRestartEnv });
  // Each question's first request streams for a minute and a half; any later one is an instant echo.
  await system.setModelScript({ default: { type: 'echo', prefix: 'echo: ' }, rules: Object.values(chats).map((chat) => slowRule(`^${question(chat)}$`, 1)) });
}, 60_000);
afterAll(async () => {
  await system?.close();
});

const admin = <T>(method: string, path: string, body?: unknown) => adminRequest<T>(system.gateway.url, method, path, { token: aliceToken, body });
const messagesOf = (snapshot: ChatSnapshot, sessionId: number | null) => snapshot.messages.filter((m) => m.session_id === sessionId).map((m) => [m.role, m.content]);

/** An answered first message, then the slow question running: returns the conversation as it was and the running request. */
async function questionRunning(chat: number) {
  await sendText(system, chat, hello(chat));
  await waitForIdle(system, [chat]);
  const before = await conversationState(system, chat);
  await sendText(system, chat, question(chat));
  const { request, turnId } = await waitForRunningTurn(system, chat, question(chat));
  return { before, cut: request, turnId };
}

/** The superseded turn is stopped at once (not left streaming to a refused commit); its input runs again. */
async function waitForRerun(chat: number, cutRequestId: number): Promise<void> {
  await waitForCondition('the question answered again', async () => (await modelRequests(system)).some((r) => r.id > cutRequestId && r.body.messages.some((m) => m.content === question(chat))));
  await waitForIdle(system, [chat]);
}

async function expectAnsweredOnceAfterSupersession(chat: number, turnId: number): Promise<void> {
  expect((await sentTo(system, chat)).map((m) => m.text)).toEqual([`echo: ${hello(chat)}`, `echo: ${question(chat)}`]);
  expect((await turnsOf(system, chat)).map((t) => [t.id === turnId ? 'cut' : 'turn', t.status, t.error])).toEqual([
    ['turn', 'completed', null],
    ['cut', 'interrupted', 'superseded_by_operator'],
    ['turn', 'completed', null],
  ]);
}

describe('an operator action while a turn runs', () => {
  it('reset: the turn commits nothing into the old session, and the question is answered once in the new one', { timeout: 60_000 }, async () => {
    const chat = chats.reset;
    const lifecycle = await subscribeLifecycleEvents(system);
    const { before, cut, turnId } = await questionRunning(chat);
    const reset = await admin<{ conversation: { currentSessionId: number } }>('POST', `/admin/conversations/${before.id}/reset`);
    expect(reset.status).toBe(200);
    const fresh = reset.body.conversation.currentSessionId;
    expect(fresh).not.toBe(before.current_session_id);
    await waitForRerun(chat, cut.id);

    const snapshot = await loadChat(system, chat);
    expect(messagesOf(snapshot, before.current_session_id)).toEqual([['user', hello(chat)], ['assistant', `echo: ${hello(chat)}`]]);
    expect(messagesOf(snapshot, fresh)).toEqual([['user', question(chat)], ['assistant', `echo: ${question(chat)}`]]);
    await expectAnsweredOnceAfterSupersession(chat, turnId);
    // The fresh session has no earlier context: the rerun's request carries only the question.
    const rerun = (await modelRequests(system)).filter((r) => r.id > cut.id && r.body.messages.some((m) => m.content === question(chat)));
    expect(rerun.map((r) => r.body.messages.filter((m) => m.role === 'user').map((m) => m.content))).toEqual([[question(chat)]]);
    expect(lifecycle.of(before.id).filter((e) => e.type.startsWith('session.')).map((e) => [e.type, e.sessionId, e.reason])).toEqual([
      ['session.started', before.current_session_id, undefined],
      ['session.finalized', before.current_session_id, 'operator'],
      ['session.started', fresh, undefined],
    ]);
    lifecycle.close();
  });

  it('suspend: the parked session stays as it was, the question is answered once in a fresh session, and a resume restores the parked one', { timeout: 60_000 }, async () => {
    const chat = chats.suspend;
    const { before, cut, turnId } = await questionRunning(chat);
    expect((await admin('POST', `/admin/conversations/${before.id}/suspend`, { reason: 'investigating' })).status).toBe(200);
    await waitForRerun(chat, cut.id);

    const suspended = await conversationState(system, chat);
    expect(suspended).toMatchObject({ status: 'suspended', pre_suspend_session_id: before.current_session_id });
    const snapshot = await loadChat(system, chat);
    expect(messagesOf(snapshot, before.current_session_id)).toEqual([['user', hello(chat)], ['assistant', `echo: ${hello(chat)}`]]);
    expect(messagesOf(snapshot, suspended.current_session_id)).toEqual([['user', question(chat)], ['assistant', `echo: ${question(chat)}`]]);
    await expectAnsweredOnceAfterSupersession(chat, turnId);

    expect((await admin('POST', `/admin/conversations/${before.id}/resume`)).status).toBe(200);
    expect(await conversationState(system, chat)).toMatchObject({ status: 'active', current_session_id: before.current_session_id });
  });

  it('delete: the running turn is stopped and sends nothing; nothing of the conversation is left', { timeout: 60_000 }, async () => {
    const chat = chats.remove;
    const { before, cut } = await questionRunning(chat);
    const [row] = await system.sql<{ key: string }[]>`select key from conversations where id = ${before.id}`;
    const deleted = await admin('DELETE', `/admin/conversations/${before.id}?confirm=${encodeURIComponent(row?.key ?? '')}`);
    expect(deleted.status).toBe(200);
    await waitForModelRequest(system, (r) => r.id === cut.id, { state: 'settled', timeoutMs: 10_000, what: 'the stopped stream' });
    // Long enough for a stopped turn that still tried to commit or send to have done so.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await sentTo(system, chat)).map((m) => m.text)).toEqual([`echo: ${hello(chat)}`]);
    const [left] = await system.sql<{ n: number }[]>`
      select (select count(*)::int from conversations where id = ${before.id}) + (select count(*)::int from turns where conversation_id = ${before.id})
        + (select count(*)::int from inbound_events where conversation_id = ${before.id}) + (select count(*)::int from outbox where conversation_id = ${before.id}) as n`;
    expect(left?.n).toBe(0);
  });
});
