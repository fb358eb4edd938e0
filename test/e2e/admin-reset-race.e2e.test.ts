import { afterAll, beforeAll, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv, aliceToken } from '../support/admin-client.ts';
import { conversationState, fastRestartEnv, slowRule, subscribeLifecycleEvents, turnsOf, waitForRunningTurn } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { loadChat, modelRequests, sendText, sentTo, waitForCondition, waitForIdle } from '../support/turn-helpers.ts';

/**
 * Issue 20: an operator's reset racing a running turn. The admin API acts
 * outside the conversation's lease, so the reset is fenced like a commit:
 * the running turn is superseded in the reset's own transaction, its commit
 * is refused (nothing of it lands in the session the reset finalized, and
 * its streamed answer is never sent), and its input, still pending, is
 * answered once, in the fresh session. What the user sees: one answer to
 * the question, in a conversation that starts afresh with it.
 */

const chat = 46_001;
const hello = `c${chat}:hello`;
const slow = `c${chat}:slow question`;

let system: TestSystem;
beforeAll(async () => {
  system = await TestSystem.start({ workers: 1, gatewayEnv: { ADMIN_TOKEN: adminTokenEnv }, workerEnv: fastRestartEnv });
  // The first request for the slow question streams for a minute and a half; the one after the reset is an instant echo.
  await system.setModelScript({ default: { type: 'echo', prefix: 'echo: ' }, rules: [slowRule(`^${slow}$`, 1)] });
}, 60_000);
afterAll(async () => {
  await system?.close();
});

it('an admin reset mid-turn: the turn commits nothing into the old session, and the question is answered once in the new one', { timeout: 60_000 }, async () => {
  await sendText(system, chat, hello);
  await waitForIdle(system, [chat]);
  const before = await conversationState(system, chat);
  const lifecycle = await subscribeLifecycleEvents(system);

  await sendText(system, chat, slow);
  const { request: cut, turnId } = await waitForRunningTurn(system, chat, slow);
  const reset = await adminRequest<{ ok: true; conversation: { currentSessionId: number } }>(system.gateway.url, 'POST', `/admin/conversations/${before.id}/reset`, { token: aliceToken });
  expect(reset.status).toBe(200);
  const fresh = reset.body.conversation.currentSessionId;
  expect(fresh).not.toBe(before.current_session_id);

  // The superseded turn is stopped at once (not left streaming to a refused commit); its input runs again.
  await waitForCondition('the question answered again', async () => (await modelRequests(system)).some((r) => r.id > cut.id && r.body.messages.some((m) => m.content === slow)));
  await waitForIdle(system, [chat]);

  const snapshot = await loadChat(system, chat);
  const bySession = (sessionId: number | null) => snapshot.messages.filter((m) => m.session_id === sessionId).map((m) => [m.role, m.content]);
  // Nothing of the cut turn in the session the reset finalized; the question and its one answer in the fresh one.
  expect(bySession(before.current_session_id)).toEqual([['user', hello], ['assistant', `echo: ${hello}`]]);
  expect(bySession(fresh)).toEqual([['user', slow], ['assistant', `echo: ${slow}`]]);
  expect((await sentTo(system, chat)).map((m) => m.text)).toEqual([`echo: ${hello}`, `echo: ${slow}`]);
  expect((await turnsOf(system, chat)).map((t) => [t.id === turnId ? 'cut' : 'turn', t.status, t.error])).toEqual([
    ['turn', 'completed', null],
    ['cut', 'interrupted', 'superseded_by_operator'],
    ['turn', 'completed', null],
  ]);
  // The fresh session has no earlier context: the rerun's request carries only the question.
  const rerun = (await modelRequests(system)).filter((r) => r.id > cut.id && r.body.messages.some((m) => m.content === slow));
  expect(rerun.map((r) => r.body.messages.filter((m) => m.role === 'user').map((m) => m.content))).toEqual([[slow]]);

  expect(lifecycle.of(before.id).filter((e) => e.type.startsWith('session.')).map((e) => [e.type, e.sessionId, e.reason])).toEqual([
    ['session.finalized', before.current_session_id, 'operator'],
    ['session.started', fresh, undefined],
  ]);
  lifecycle.close();
});
