import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexSetup, decisionsSent, waitForTurnStart, type CodexSetup } from '../support/codex-system.ts';
import { callHook, createConversation, writeHooksFile } from '../support/hooks.ts';
import { botToken, postJson, TestSystem } from '../support/system.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-env.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

// Issue 34, triggered turns (docs/tools.md, "Whose turn it is"): a Codex turn started by POST /hooks/{name} asks
// its approval question of nobody, so the chat's own user cannot answer it and an APPROVERS user can. Real
// worker processes with the fake app-server of apps/sim as the child, the real gateway and simulator.
const telegramAccount = botToken.split(':')[0] as string;
const approverId = 7777;
const chatId = 5301;
const secret = 'deploy-hook-secret-0123456789';

interface TelegramSent {
  message_id: number;
  text: string;
}

describe('an approval question of a triggered Codex turn', () => {
  let database: TestDatabase;
  let setup: CodexSetup;
  let system: TestSystem;

  beforeAll(async () => {
    database = await createTestDatabase();
    const conversationId = await createConversation(database.url, { platform: 'telegram', accountId: telegramAccount, chatId: String(chatId), threadId: '', userScope: '' });
    const hooksFile = writeHooksFile({ deploy: { secret, conversationId, prompt: '{{body}}' } });
    setup = codexSetup({ APPROVAL_TIMEOUT_SECONDS: '60' });
    system = await TestSystem.start({
      databaseUrl: database.url,
      workerProcesses: true,
      workerEnv: setup.workerEnv,
      gatewayEnv: { HOOKS_FILE: hooksFile, APPROVERS: `telegram:${telegramAccount}:${approverId}` },
    });
  });
  afterAll(async () => {
    await system?.close();
    setup?.cleanup();
    await database?.drop();
  });

  const telegramSent = async () => (await (await fetch(`${system.simUrl}/control/telegram/sent?chat_id=${chatId}`)).json()) as TelegramSent[];
  const waitForText = async (what: (text: string) => boolean, label: string): Promise<TelegramSent> => {
    await waitForCondition(label, async () => (await telegramSent()).some((m) => what(m.text)), 20_000);
    return (await telegramSent()).find((m) => what(m.text)) as TelegramSent;
  };
  const press = (messageId: number, fromId: number) =>
    postJson(`${system.simUrl}/control/telegram/press`, { chat_id: chatId, message_id: messageId, from: { id: fromId }, text: 'Approve' }) as Promise<{ answer: { text?: string } | null }>;

  it('is refused to the chat’s own user, answered by an approver, and the turn goes on to its answer', async () => {
    const called = await callHook(system.gateway.url, { name: 'deploy', secret, body: 'run: make build', deliveryId: 'deploy-1', contentType: 'text/plain' });
    expect(called.status).toBe(200);
    const asked = await waitForText((t) => t.includes('make build'), 'the question about make build');
    const { instance } = await waitForTurnStart(setup, 'run: make build');

    expect((await press(asked.message_id, chatId)).answer?.text).toBe('Only an approver can answer this.');
    expect(decisionsSent(setup, instance)).toEqual([]);
    expect((await press(asked.message_id, approverId)).answer?.text).toBe(`Approved by ${approverId}.`);
    await waitForText((t) => t === 'codex: ran make build', 'the answer after the command ran');
    expect(decisionsSent(setup, instance)).toEqual(['accept']);

    const rows = await system.sql<{ status: string; asked_of_user_key: string | null; decided_by_user_key: string | null; user_key: string }[]>`
      select a.status, a.asked_of_user_key, a.decided_by_user_key, t.user_key from approvals a join turns t on t.id = a.turn_id
      join conversations c on c.id = a.conversation_id where c.chat_id = ${String(chatId)}`;
    expect(rows).toEqual([{ status: 'approved', asked_of_user_key: null, decided_by_user_key: `telegram:${telegramAccount}:${approverId}`, user_key: `telegram:${telegramAccount}:hook:deploy` }]);
  });
});
