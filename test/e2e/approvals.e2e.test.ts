import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalAnswer, ApprovalQuestion } from '@switchboard/agent';
import { approvalAskedOf, hookUserId, renderNotAllowed, userKeyOf } from '@switchboard/core';
import { createDbClient, type DbClient } from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { createDiscordSender, createSlackSender, createTelegramSender, type PlatformSender } from '@switchboard/platforms';
import { createApprovalWaiters, createChatAskUser, subscribeApprovalWaiters, type ApprovalContext, type ApprovalTurn } from '@switchboard/worker';
import { discordApplicationId, discordBotToken, discordSent, sendDiscordInteraction, sendDiscordMessage, waitForDiscordGateway, waitForDiscordMessages } from '../support/discord.ts';
import { adminRequest, adminTokenEnv } from '../support/admin-client.ts';
import { slackBotToken } from '../support/slack.ts';
import { botToken, postJson, TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';
import { waitForCondition, waitForModelRequest, waitForRequestFor } from '../support/turn-helpers.ts';

// Approvals asked of the chat user (docs/codex.md, "Approvals in chat"): the real gateway and simulator, and
// createChatAskUser called here with the worker's real senders pointed at the simulator. No worker
// runs: the question's replies are delivered by the waiting ask itself, as in a turn that holds the conversation.
const telegramAccount = botToken.split(':')[0] as string;
const approver = `telegram:${telegramAccount}:7777`;
const question: ApprovalQuestion = { kind: 'command', summary: 'run `make build`', detail: 'make build\nin /work/app' };

interface TelegramSent {
  message_id: number;
  text: string;
  reply_markup?: { inline_keyboard: { text: string; callback_data: string }[][] };
}

describe('approvals asked in the chat', () => {
  let system: TestSystem;
  let db: DbClient;
  let subscriber: Redis;
  let ctx: ApprovalContext;
  let turnIds = 100;

  beforeAll(async () => {
    system = await TestSystem.start({ slack: true, discord: true, workers: 0, gatewayEnv: { APPROVERS: approver, ADMIN_TOKEN: adminTokenEnv } });
    db = createDbClient(system.databaseUrl, { max: 4 });
    subscriber = new Redis(redisUrl());
    const waiters = createApprovalWaiters();
    const log = createLogger('approvals-test', 'silent');
    await subscribeApprovalWaiters(subscriber, system.redisPrefix, waiters, log);
    const senders = new Map<string, PlatformSender>([
      ['telegram', createTelegramSender({ token: botToken, apiRoot: system.simUrl })],
      ['slack', createSlackSender({ token: slackBotToken, apiUrl: `${system.simUrl}/api/` })],
      ['discord', createDiscordSender({ token: discordBotToken, apiUrl: `${system.simUrl}/api` })],
    ]);
    ctx = { db: db.db, senders, log, workerId: 'approvals-test', config: { APPROVAL_TIMEOUT_SECONDS: 30, CODEX_AUTO_APPROVE: 'off', WORKER_DEAD_AFTER_MS: 5000 }, approvalWaiters: waiters, approvalPollMs: 5000 };
    await waitForDiscordGateway(system.simUrl, { connected: true });
  });
  afterAll(async () => {
    subscriber?.disconnect();
    await db?.close();
    await system?.close();
  });

  const approvalsOf = (conversationId: number) =>
    system.sql<{ status: string; decided_by_user_key: string | null; decided_via: string | null; asked_of_user_key: string | null }[]>`
      select status, decided_by_user_key, decided_via, asked_of_user_key from approvals where conversation_id = ${conversationId} order by id`.then((rows) => [...rows]);
  const conversationOf = async (platform: string, chatId: string) => {
    await expect.poll(async () => (await system.sql`select 1 from conversations where platform = ${platform} and chat_id = ${chatId}`).length, { timeout: 10_000 }).toBe(1);
    const [row] = await system.sql<{ id: number }[]>`select id::int from conversations where platform = ${platform} and chat_id = ${chatId}`;
    return row!.id;
  };
  const turnOn = (conversationId: number, platform: string, replyTarget: Record<string, unknown>, askedOfUserKey: string): ApprovalTurn => ({
    conversationId, turnId: ++turnIds, platform, replyTarget, askedOfUserKey,
  });
  const telegramSent = async (chatId: number, count: number) => (await system.waitForTelegram(chatId, count)) as unknown as TelegramSent[];
  const pressTelegram = (chatId: number, messageId: number, fromId: number, text: string) =>
    postJson(`${system.simUrl}/control/telegram/press`, { chat_id: chatId, message_id: messageId, from: { id: fromId }, text }) as Promise<{ status: number; answer: { text?: string } | null }>;

  async function startTelegramConversation(chatId: number): Promise<ApprovalTurn> {
    await system.sendTelegram({ chatId, text: 'please build it' });
    const conversationId = await conversationOf('telegram', String(chatId));
    return turnOn(conversationId, 'telegram', { chatId }, `telegram:${telegramAccount}:${chatId}`);
  }

  it('Telegram: asks with buttons; a stranger’s press is refused and changes nothing; the asking user’s Approve resolves approved', async () => {
    const chatId = 4201;
    const turn = await startTelegramConversation(chatId);
    const answer = createChatAskUser(ctx, turn)(question, new AbortController().signal);

    const [asked] = await telegramSent(chatId, 1);
    expect(asked!.text).toContain('make build\nin /work/app');
    expect(asked!.text).toContain('/approve, /approve session or /deny');
    expect(asked!.reply_markup?.inline_keyboard.flat().map((b) => b.text)).toEqual(['Approve', 'Approve for session', 'Deny']);
    expect(asked!.reply_markup?.inline_keyboard.flat().every((b) => /^apv:[A-Za-z0-9_-]+:[asd]$/.test(b.callback_data))).toBe(true);

    const stranger = await pressTelegram(chatId, asked!.message_id, 4299, 'Approve');
    expect(stranger.status).toBe(200);
    expect(stranger.answer?.text).toBe(`Only ${chatId} or an approver can answer this.`);
    expect(await approvalsOf(turn.conversationId)).toEqual([{ status: 'pending', decided_by_user_key: null, decided_via: null, asked_of_user_key: turn.askedOfUserKey }]);

    const pressed = await pressTelegram(chatId, asked!.message_id, chatId, 'Approve');
    expect(pressed.answer?.text).toBe(`Approved by ${chatId}.`);
    expect(await answer).toEqual<ApprovalAnswer>({ decision: 'approved' });
    expect(await approvalsOf(turn.conversationId)).toEqual([{ status: 'approved', decided_by_user_key: turn.askedOfUserKey, decided_via: 'button', asked_of_user_key: turn.askedOfUserKey }]);
    // The chat is told who decided, and the question loses its buttons.
    const sent = await telegramSent(chatId, 2);
    expect(sent[1]!.text).toBe(`Approved by ${chatId}.`);
    expect(sent[0]!.reply_markup).toBeUndefined();
    expect(sent[0]!.text).toContain(`Approved`);
    // The operator sees the question and its decision.
    const listed = await adminRequest<{ approvals: Record<string, unknown>[] }>(system.gateway.url, 'GET', `/admin/conversations/${turn.conversationId}/approvals`);
    expect(listed.body.approvals).toEqual([
      expect.objectContaining({ turnId: turn.turnId, kind: 'command', summary: question.summary, detail: question.detail, status: 'approved', decidedByUserKey: turn.askedOfUserKey, decidedVia: 'button' }),
    ]);
  });

  it('Telegram: an approver may answer a question asked of someone else', async () => {
    const chatId = 4202;
    const turn = await startTelegramConversation(chatId);
    const answer = createChatAskUser(ctx, turn)(question, new AbortController().signal);
    const [asked] = await telegramSent(chatId, 1);
    await pressTelegram(chatId, asked!.message_id, 7777, 'Approve for session');
    expect(await answer).toEqual({ decision: 'approved_for_session' });
    expect((await approvalsOf(turn.conversationId))[0]).toMatchObject({ status: 'approved_for_session', decided_by_user_key: approver });
  });

  it('Telegram: a triggered turn’s question (user hook:<name>) is named for nobody: the chat’s own user is refused, an approver answers', async () => {
    const chatId = 4203;
    const started = await startTelegramConversation(chatId);
    // What the worker passes for a turn whose first input came from POST /hooks/ci (execute-turn.ts, docs/tools.md "Whose turn it is").
    const turn: ApprovalTurn = { ...started, askedOfUserKey: approvalAskedOf(userKeyOf('telegram', telegramAccount, hookUserId('ci')), hookUserId('ci')) };
    expect(turn.askedOfUserKey).toBeNull();
    const answer = createChatAskUser(ctx, turn)(question, new AbortController().signal);
    const [asked] = await telegramSent(chatId, 1);
    const chatUser = await pressTelegram(chatId, asked!.message_id, chatId, 'Approve');
    expect(chatUser.answer?.text).toBe(renderNotAllowed(null));
    expect(await approvalsOf(turn.conversationId)).toEqual([{ status: 'pending', decided_by_user_key: null, decided_via: null, asked_of_user_key: null }]);
    await pressTelegram(chatId, asked!.message_id, 7777, 'Approve');
    expect(await answer).toEqual({ decision: 'approved' });
    expect((await approvalsOf(turn.conversationId))[0]).toMatchObject({ status: 'approved', decided_by_user_key: approver });
  });

  it('Slack: a stranger’s button press gets an ephemeral refusal; /approve typed by the asking user resolves, stored once, never input', async () => {
    const channel = 'D4203';
    await system.sendSlack({ channel, user: 'U4203', text: 'please build it' });
    const conversationId = await conversationOf('slack', channel);
    const turn = turnOn(conversationId, 'slack', { channel }, 'slack:T0SIM:U4203');
    const answer = createChatAskUser(ctx, turn)(question, new AbortController().signal);
    const [asked] = (await system.waitForSlack(channel, 1)) as unknown as { ts: string; blocks: unknown }[];
    expect(JSON.stringify(asked!.blocks)).toContain('apv:');

    const press = (await postJson(`${system.simUrl}/control/slack/press`, { channel, ts: asked!.ts, user: 'U9999', text: 'Approve' })) as { status: number; response_id: string };
    expect(press.status).toBe(200);
    await expect
      .poll(async () => ((await (await fetch(`${system.simUrl}/control/slack/responses`)).json()) as { response_id: string; body: { text?: string; response_type?: string } }[]).find((r) => r.response_id === press.response_id)?.body)
      .toMatchObject({ response_type: 'ephemeral', text: 'Only U4203 or an approver can answer this.' });
    expect((await approvalsOf(conversationId))[0]?.status).toBe('pending');

    const typed = await system.sendSlack({ channel, user: 'U4203', text: '/approve' });
    expect(typed.status).toBe(200);
    expect(await answer).toEqual({ decision: 'approved' });
    expect((await approvalsOf(conversationId))[0]).toMatchObject({ status: 'approved', decided_via: 'text', decided_by_user_key: 'slack:T0SIM:U4203' });
    const sent = await system.waitForSlack(channel, 2);
    expect(sent[1]!.text).toBe('Approved by U4203.');
    // Stored once, done: never input for a turn, never a second decision on a re-delivery.
    const events = await system.sql<{ status: string; command: string | null }[]>`
      select status, command from inbound_events where event_id = ${typed.eventId}`;
    expect([...events]).toEqual([{ status: 'done', command: 'approve' }]);
  });

  it('Discord: the Deny button resolves denied (the question rewritten without buttons); /deny typed resolves denied', async () => {
    const channelId = '5000000000000004204';
    const userId = '4000000000000004204';
    await sendDiscordMessage(system.simUrl, { channelId, content: 'please build it', authorId: userId });
    const conversationId = await conversationOf('discord', channelId);
    const turn = turnOn(conversationId, 'discord', { channelId }, `discord:${discordApplicationId}:${userId}`);
    const ask = createChatAskUser(ctx, turn);

    const first = ask(question, new AbortController().signal);
    const [asked] = (await waitForDiscordMessages(system.simUrl, channelId, 1)) as unknown as { id: string; components: { components: { label: string }[] }[] }[];
    expect(asked!.components[0]!.components.map((b) => b.label)).toEqual(['Approve', 'Approve for session', 'Deny']);
    const pressed = (await postJson(`${system.simUrl}/control/discord/interactions`, {
      channel_id: channelId, user: { id: userId, username: 'tester' }, component: { message_id: asked!.id, label: 'Deny' },
    })) as { status: number; body: { type: number; data: { content: string; components: unknown[] } } };
    expect(pressed.body).toMatchObject({ type: 7, data: { components: [] } });
    expect(pressed.body.data.content).toContain(`Denied by ${userId}.`);
    expect(await first).toEqual({ decision: 'denied' });

    const second = ask({ kind: 'file_change', summary: 'change 2 files', detail: 'src/a.ts\nsrc/b.ts' }, new AbortController().signal);
    await waitForDiscordMessages(system.simUrl, channelId, 3);
    await sendDiscordMessage(system.simUrl, { channelId, content: '/deny', authorId: userId });
    expect(await second).toEqual({ decision: 'denied' });
    // The slash command answers too; its deferred response is edited with the outcome.
    const third = ask(question, new AbortController().signal);
    await expect.poll(async () => (await approvalsOf(conversationId)).length).toBe(3);
    const slash = await sendDiscordInteraction(system.simUrl, { name: 'approve', options: [{ name: 'scope', value: 'session' }], channelId, userId });
    expect(slash.body).toEqual({ type: 5 });
    expect(await third).toEqual({ decision: 'approved_for_session' });
    await expect
      .poll(async () => (await discordSent(system.simUrl, channelId)).find((m) => m.interaction_id === slash.interaction.id)?.content)
      .toBe(`Approved for this session by ${userId}.`);
    expect((await approvalsOf(conversationId)).map((a) => [a.status, a.decided_via])).toEqual([
      ['denied', 'button'],
      ['denied', 'text'],
      ['approved_for_session', 'text'],
    ]);
  });

  it('declines when nobody answers in time: the row expires and the chat is told', async () => {
    const chatId = 4205;
    const turn = await startTelegramConversation(chatId);
    const quick: ApprovalContext = { ...ctx, config: { ...ctx.config, APPROVAL_TIMEOUT_SECONDS: 1 } };
    const started = Date.now();
    expect(await createChatAskUser(quick, turn)(question, new AbortController().signal)).toEqual({ decision: 'unanswered' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect((await approvalsOf(turn.conversationId))[0]).toMatchObject({ status: 'expired', decided_via: 'timeout' });
    const sent = await telegramSent(chatId, 2);
    expect(sent[1]!.text).toBe('No answer in time: declined.');
    // A late press is refused.
    const late = await pressTelegram(chatId, sent[0]!.message_id, chatId, 'Approve').catch((error: unknown) => error);
    expect(late).toBeInstanceOf(Error); // the buttons are gone from the question
  });

  it('cancels when the turn’s signal is aborted (a /stop or an interrupt)', async () => {
    const chatId = 4206;
    const turn = await startTelegramConversation(chatId);
    const controller = new AbortController();
    const answer = createChatAskUser(ctx, turn)(question, controller.signal);
    await telegramSent(chatId, 1);
    controller.abort();
    expect(await answer).toEqual({ decision: 'cancelled' });
    expect((await approvalsOf(turn.conversationId))[0]).toMatchObject({ status: 'cancelled', decided_via: 'cancelled' });
  });

  it('fails closed when the question cannot be posted, and approves without asking when auto-approve is on', async () => {
    const chatId = 4207;
    const turn = await startTelegramConversation(chatId);
    const noTelegram: ApprovalContext = { ...ctx, senders: new Map() };
    expect(await createChatAskUser(noTelegram, turn)(question, new AbortController().signal)).toEqual({ decision: 'unanswered' });
    const auto: ApprovalContext = { ...ctx, config: { ...ctx.config, CODEX_AUTO_APPROVE: 'on' } };
    expect(await createChatAskUser(auto, { ...turn, turnId: ++turnIds })(question, new AbortController().signal)).toEqual({ decision: 'approved' });
    expect((await approvalsOf(turn.conversationId)).map((a) => [a.status, a.decided_via])).toEqual([
      ['denied', 'not_asked'],
      ['approved', 'auto'],
    ]);
  });

  it('answers /approve with nothing pending in words, and never as turn input', async () => {
    const chatId = 4208;
    await system.sendTelegram({ chatId, text: '/approve' });
    const conversationId = await conversationOf('telegram', String(chatId));
    const rows = await system.sql<{ status: string; text: string }[]>`select status, text from outbox where conversation_id = ${conversationId}`;
    expect([...rows]).toEqual([{ status: 'pending', text: 'There is no question waiting for an answer.' }]);
    const events = await system.sql<{ status: string }[]>`select status from inbound_events where conversation_id = ${conversationId}`;
    expect([...events]).toEqual([{ status: 'done' }]);
  });

  it('a flood of /deny with nothing pending gets its refusal once, not once a message (issue 30, finding 5)', async () => {
    const chatId = 4209;
    for (let i = 0; i < 8; i++) expect((await system.sendTelegram({ chatId, text: '/deny' })).status).toBe(200);
    const conversationId = await conversationOf('telegram', String(chatId));
    const rows = await system.sql<{ text: string }[]>`select text from outbox where conversation_id = ${conversationId}`;
    // Before: eight lines, each a platform send from the bot's quota.
    expect(rows.map((r) => r.text)).toEqual(['There is no question waiting for an answer.']);
  });
});

describe('approvals answered through the Telegram poller', () => {
  let system: TestSystem;
  let db: DbClient;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 0, gatewayEnv: { TELEGRAM_MODE: 'polling' } });
    db = createDbClient(system.databaseUrl, { max: 2 });
  });
  afterAll(async () => {
    await db?.close();
    await system?.close();
  });

  it('takes a button press from getUpdates, answers the callback query and resolves the question', async () => {
    // The poller takes the webhook off before it polls.
    await expect.poll(async () => ((await (await fetch(`${system.simUrl}/control/telegram/webhook`)).json()) as { url: string | null }).url, { timeout: 15_000 }).toBeNull();
    const chatId = 4301;
    await system.sendTelegram({ chatId, text: 'please build it' });
    await expect.poll(async () => (await system.sql`select 1 from conversations where chat_id = ${String(chatId)}`).length, { timeout: 15_000 }).toBe(1);
    const [row] = await system.sql<{ id: number }[]>`select id::int from conversations where chat_id = ${String(chatId)}`;
    const ctx: ApprovalContext = {
      db: db.db,
      senders: new Map([['telegram', createTelegramSender({ token: botToken, apiRoot: system.simUrl })]]),
      log: createLogger('approvals-test', 'silent'),
      workerId: 'approvals-poller-test',
      config: { APPROVAL_TIMEOUT_SECONDS: 30, CODEX_AUTO_APPROVE: 'off', WORKER_DEAD_AFTER_MS: 5000 },
      // No signal subscription here: the question is re-read, as when a Redis message is lost.
      approvalPollMs: 200,
    };
    const answer = createChatAskUser(ctx, { conversationId: row!.id, turnId: 1, platform: 'telegram', replyTarget: { chatId }, askedOfUserKey: `telegram:${telegramAccount}:${chatId}` })(question, new AbortController().signal);
    const [asked] = (await system.waitForTelegram(chatId, 1)) as unknown as TelegramSent[];
    const pressed = (await postJson(`${system.simUrl}/control/telegram/press`, { chat_id: chatId, message_id: asked!.message_id, from: { id: chatId }, text: 'Deny' })) as { queued: boolean };
    expect(pressed.queued).toBe(true);
    expect(await answer).toEqual({ decision: 'denied' });
    await expect
      .poll(async () => ((await (await fetch(`${system.simUrl}/control/telegram/callback-answers`)).json()) as { text?: string }[]).map((a) => a.text))
      .toEqual([`Denied by ${chatId}.`]);
  });
});

describe('an approval answer while a turn runs in interrupt mode', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, workerEnv: { BUSY_INPUT_MODE: 'interrupt' } });
    await system.setModelScript({ rules: [{ match: 'tell a long story', replyRepeat: { text: 'once upon a time ', count: 150 }, chunkDelayMs: 10 }] });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('neither interrupts the turn nor becomes its input: the story is told whole, and the answer is told nothing waits', async () => {
    const chatId = 4401;
    await system.sendTelegram({ chatId, text: 'tell a long story' });
    const story = await waitForRequestFor(system, 'tell a long story');
    const typed = await system.sendTelegram({ chatId, text: '/approve' });
    expect(typed.status).toBe(200);
    const finished = await waitForModelRequest(system, (r) => r.id === story.id, { state: 'settled', what: 'for the story' });
    expect(finished.abortedAt).toBeUndefined();
    // Both go out once the turn commits, in the order they were queued (the answer's line was queued first).
    const sent = await system.waitForTelegram(chatId, 2);
    // Compared as the user reads them: whitespace at a message's ends is not shown (Telegram trims it).
    expect(sent.map((m) => m.text.trim()).sort()).toEqual(['There is no question waiting for an answer.', 'once upon a time '.repeat(150).trim()]);
    const events = await system.sql<{ status: string; command: string }[]>`
      select e.status, e.command from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = ${String(chatId)} order by e.id`;
    expect([...events]).toEqual([
      { status: 'done', command: 'text' },
      { status: 'done', command: 'approve' },
    ]);
    // Only the story reached the model.
    const [count] = await system.sql<{ n: number }[]>`select count(*)::int as n from messages m join conversations c on c.current_session_id = m.session_id where c.chat_id = ${String(chatId)} and m.role = 'user'`;
    expect(count?.n).toBe(1);
  });
});

describe('/stop with nothing running, through a worker', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1 });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('a flood of /stop with nothing running says "Nothing was running." once a minute, and every /stop is still handled (issue 30, finding 5)', async () => {
    const chatId = 4210;
    for (let i = 0; i < 6; i++) expect((await system.sendTelegram({ chatId, text: '/stop' })).status).toBe(200);
    const [conversation] = await system.sql<{ id: number }[]>`select id::int from conversations where chat_id = ${String(chatId)}`;
    const conversationId = conversation?.id ?? 0;
    await waitForCondition('every /stop handled', async () => {
      const [row] = await system.sql<{ pending: number }[]>`select count(*)::int as pending from inbound_events where conversation_id = ${conversationId} and status = 'pending'`;
      return row?.pending === 0;
    });
    // A message after the flood is answered as usual: the /stops held nothing up.
    await system.sendTelegram({ chatId, text: 'still there?' });
    await waitForCondition('the answer', async () => (await system.sql`select 1 from outbox where conversation_id = ${conversationId} and text = 'echo: still there?'`).length === 1);
    const rows = await system.sql<{ text: string }[]>`select text from outbox where conversation_id = ${conversationId} order by id`;
    // Before: six lines, each a platform send from the bot's quota.
    expect(rows.map((r) => r.text)).toEqual(['Nothing was running.', 'echo: still there?']);
  });
});
