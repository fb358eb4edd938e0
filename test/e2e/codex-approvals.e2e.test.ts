import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRuntime } from '@switchboard/agent';
import { createDbClient, type DbClient } from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { createSlackSender, createTelegramSender, type PlatformSender } from '@switchboard/platforms';
import { createApprovalWaiters, createChatAskUser, subscribeApprovalWaiters, type ApprovalContext, type ApprovalTurn } from '@switchboard/worker';
import { createFakeCodexSetup, turnRequest, type FakeCodexSetup } from '../codex/fake-codex-fixture.ts';
import { slackBotToken } from '../support/slack.ts';
import { botToken, postJson, TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

// The Codex runtime (against the fake app-server, a real child) asking through createChatAskUser, with the
// real gateway and simulator answering: what a Codex turn does with a command the chat user approves,
// denies, does not answer, or that someone else tries to answer. The worker's wiring is not used: the
// runtime's runTurn is called here with the askUser the worker passes.
const telegramAccount = botToken.split(':')[0] as string;

describe('a Codex command approved or refused in the chat', () => {
  let system: TestSystem;
  let db: DbClient;
  let subscriber: Redis;
  let ctx: ApprovalContext;
  let codex: FakeCodexSetup;
  let conversationIds = 0;

  beforeAll(async () => {
    system = await TestSystem.start({ slack: true, workers: 0 });
    db = createDbClient(system.databaseUrl, { max: 4 });
    subscriber = new Redis(redisUrl());
    const waiters = createApprovalWaiters();
    const log = createLogger('codex-approvals-test', 'silent');
    await subscribeApprovalWaiters(subscriber, system.redisPrefix, waiters, log);
    const senders = new Map<string, PlatformSender>([
      ['telegram', createTelegramSender({ token: botToken, apiRoot: system.simUrl })],
      ['slack', createSlackSender({ token: slackBotToken, apiUrl: `${system.simUrl}/api/` })],
    ]);
    ctx = { db: db.db, senders, log, workerId: 'codex-approvals-test', config: { APPROVAL_TIMEOUT_SECONDS: 30, CODEX_AUTO_APPROVE: 'off', WORKER_DEAD_AFTER_MS: 5000 }, approvalWaiters: waiters };
    codex = createFakeCodexSetup();
  });
  afterAll(async () => {
    await codex?.cleanup();
    subscriber?.disconnect();
    await db?.close();
    await system?.close();
  });

  const runtimeFor = (): AgentRuntime => codex.createPool().runtimeFor(++conversationIds, codex.conversation({ profile: 'workspace-write' }));

  async function telegramTurn(chatId: number): Promise<ApprovalTurn> {
    await system.sendTelegram({ chatId, text: 'please build it' });
    await expect.poll(async () => (await system.sql`select 1 from conversations where chat_id = ${String(chatId)}`).length, { timeout: 10_000 }).toBe(1);
    const [row] = await system.sql<{ id: number }[]>`select id::int from conversations where chat_id = ${String(chatId)}`;
    return { conversationId: row!.id, turnId: chatId, platform: 'telegram', replyTarget: { chatId }, askedOfUserKey: `telegram:${telegramAccount}:${chatId}` };
  }
  const press = (chatId: number, messageId: number, fromId: number, text: string) =>
    postJson(`${system.simUrl}/control/telegram/press`, { chat_id: chatId, message_id: messageId, from: { id: fromId }, text }) as Promise<{ answer: { text?: string } | null }>;

  it('runs the command once the asking user presses Approve on Telegram; another user’s press changes nothing', async () => {
    const chatId = 5101;
    const turn = await telegramTurn(chatId);
    const result = runtimeFor().runTurn(turnRequest('run: make build', { askUser: createChatAskUser(ctx, turn) }));
    const [question] = (await system.waitForTelegram(chatId, 1)) as unknown as { message_id: number; text: string }[];
    expect(question!.text).toContain('make build');
    expect((await press(chatId, question!.message_id, 5199, 'Approve')).answer?.text).toBe(`Only ${chatId} or an approver can answer this.`);
    expect((await press(chatId, question!.message_id, chatId, 'Approve')).answer?.text).toBe(`Approved by ${chatId}.`);
    expect(await result).toMatchObject({ outcome: 'completed', text: 'codex: ran make build' });
  });

  it('runs the command once the asking user types /approve in Slack', async () => {
    const channel = 'D5102';
    await system.sendSlack({ channel, user: 'U5102', text: 'please build it' });
    await expect.poll(async () => (await system.sql`select 1 from conversations where chat_id = ${channel}`).length, { timeout: 10_000 }).toBe(1);
    const [row] = await system.sql<{ id: number }[]>`select id::int from conversations where chat_id = ${channel}`;
    const turn: ApprovalTurn = { conversationId: row!.id, turnId: 5102, platform: 'slack', replyTarget: { channel }, askedOfUserKey: 'slack:T0SIM:U5102' };
    const result = runtimeFor().runTurn(turnRequest('run: make build', { askUser: createChatAskUser(ctx, turn) }));
    await system.waitForSlack(channel, 1);
    await system.sendSlack({ channel, user: 'U5102', text: '/approve' });
    expect(await result).toMatchObject({ outcome: 'completed', text: 'codex: ran make build' });
  });

  it('does not run a denied command, nor one nobody answered in time, and the turn goes on', async () => {
    const denied = await telegramTurn(5103);
    const deniedRun = runtimeFor().runTurn(turnRequest('run: rm -rf build', { askUser: createChatAskUser(ctx, denied) }));
    const [question] = (await system.waitForTelegram(5103, 1)) as unknown as { message_id: number }[];
    await press(5103, question!.message_id, 5103, 'Deny');
    expect(await deniedRun).toMatchObject({ outcome: 'completed', text: 'codex: rm -rf build was declined' });

    const unanswered = await telegramTurn(5104);
    const quick: ApprovalContext = { ...ctx, config: { ...ctx.config, APPROVAL_TIMEOUT_SECONDS: 1 } };
    const timedOut = await runtimeFor().runTurn(turnRequest('run: rm -rf build', { askUser: createChatAskUser(quick, unanswered) }));
    expect(timedOut).toMatchObject({ outcome: 'completed', text: 'codex: rm -rf build was declined' });
    expect((await system.waitForTelegram(5104, 2)).at(-1)?.text).toBe('No answer in time: declined.');
    const rows = await system.sql<{ status: string }[]>`select status from approvals where conversation_id in (${denied.conversationId}, ${unanswered.conversationId}) order by id`;
    expect(rows.map((r) => r.status)).toEqual(['denied', 'expired']);
  });

  it('ends the turn interrupted when it is stopped while asking', async () => {
    const turn = await telegramTurn(5105);
    const controller = new AbortController();
    const result = runtimeFor().runTurn(turnRequest('run: make build', { signal: controller.signal, askUser: createChatAskUser(ctx, turn) }));
    await system.waitForTelegram(5105, 1);
    controller.abort();
    expect(await result).toMatchObject({ outcome: 'interrupted' });
    // The runtime does not wait for askUser to settle after an abort; the question is closed a moment later.
    await expect.poll(async () => (await system.sql<{ status: string }[]>`select status from approvals where conversation_id = ${turn.conversationId}`)[0]?.status).toBe('cancelled');
  });
});
