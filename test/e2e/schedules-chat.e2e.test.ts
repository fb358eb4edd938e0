import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSchedule, type ScheduleDeps } from '@switchboard/actions';
import { createDbClient, type DbClient } from '@switchboard/db';
import { createLogger } from '@switchboard/logger';
import { createScheduleQueue, type ScheduleQueue } from '@switchboard/queue';
import { discordSent, sendDiscordInteraction, waitForDiscordMessages } from '../support/discord.ts';
import { postJson, TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

// `/schedules` in chat (docs/schedules.md, "In chat"): a real gateway, one worker process and the
// simulator. Schedules are made here through the same door as the tool and the admin API
// (makeSchedule), armed in the worker's BullMQ queue, so a cancel can be seen to disarm them.
describe('/schedules in chat', () => {
  let system: TestSystem;
  let db: DbClient;
  let redis: Redis;
  let queue: ScheduleQueue;
  let deps: ScheduleDeps;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, slack: true, discord: true });
    db = createDbClient(system.databaseUrl, { max: 2 });
    redis = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    queue = createScheduleQueue(redis, system.redisPrefix);
    deps = { db: db.db, schedules: queue, log: createLogger('schedules-chat-test', 'silent') };
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await db?.close();
    await system?.close();
  });

  /** Sends `text` in the chat and returns the bot's next message there (the `count`-th in all). */
  async function say(chatId: number, text: string, count: number): Promise<string> {
    await system.sendTelegram({ chatId, text });
    const sent = await system.waitForTelegram(chatId, count);
    return sent[count - 1]!.text;
  }

  async function conversationOf(chatId: number | string, userScope = '', platform = 'telegram'): Promise<number> {
    const [row] = await system.sql<{ id: number }[]>`select id::int from conversations where platform = ${platform} and chat_id = ${String(chatId)} and user_scope = ${userScope}`;
    return row!.id;
  }

  interface TelegramSent {
    message_id: number;
    text: string;
    reply_markup?: { inline_keyboard: { text: string; callback_data: string }[][] };
  }
  const press = (chatId: number, messageId: number, fromId: number, text: string) =>
    postJson(`${system.simUrl}/control/telegram/press`, { chat_id: chatId, message_id: messageId, from: { id: fromId }, text }) as Promise<{ status: number; answer: { text?: string } | null }>;
  const sentTo = async (chatId: number, count: number) => (await system.waitForTelegram(chatId, count)) as unknown as TelegramSent[];
  const buttonsOf = (message: TelegramSent) => message.reply_markup?.inline_keyboard.flat().map((b) => b.text) ?? [];

  /** A cron and a one-off schedule in the conversation, armed in BullMQ. */
  // A month ahead: far enough never to run during the test, within the year a one-off may be set.
  const onceAt = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 30 * 24 * 3_600_000);
  async function scheduleBoth(conversationId: number) {
    const made = [];
    for (const spec of [{ prompt: 'water the plants', cron: '0 9 * * 1', timeZone: 'Europe/Paris' }, { prompt: 'renew the passport', at: onceAt.toISOString() }]) {
      const outcome = await makeSchedule(deps, { conversationId, spec, createdBy: 'admin:test', maxActive: null });
      if (outcome.kind !== 'created' || !outcome.armed) throw new Error(`schedule not made: ${outcome.kind}`);
      made.push(outcome.schedule.id);
    }
    return { cron: made[0]!, once: made[1]! };
  }

  const statusOf = async (id: number) => (await system.sql<{ status: string }[]>`select status from schedules where id = ${id}`)[0]?.status;
  const cronArmed = async (id: number) => (await queue.getJobScheduler(`schedule-${id}`)) !== undefined;
  const onceArmed = async (id: number) => (await queue.getJob(`once-${id}`)) !== undefined;

  it('lists the conversation’s active schedules, cancels one by id (disarmed in BullMQ) and says so; a second cancel finds nothing', async () => {
    const chatId = 5301;
    expect(await say(chatId, '/schedules', 1)).toBe('No schedules in this conversation.');
    const ids = await scheduleBoth(await conversationOf(chatId));
    expect(await cronArmed(ids.cron)).toBe(true);
    expect(await onceArmed(ids.once)).toBe(true);

    const list = await say(chatId, '/schedules', 2);
    expect(list).toContain(`#${ids.cron} cron "0 9 * * 1" (Europe/Paris): water the plants`);
    expect(list).toContain(`#${ids.once} once at ${onceAt.toISOString()}: renew the passport`);

    expect(await say(chatId, `/schedules cancel ${ids.cron}`, 3)).toBe(`Schedule #${ids.cron} cancelled.`);
    expect(await statusOf(ids.cron)).toBe('cancelled');
    expect(await cronArmed(ids.cron)).toBe(false);
    expect(await say(chatId, `/schedules cancel #${ids.once}`, 4)).toBe(`Schedule #${ids.once} cancelled.`);
    expect(await onceArmed(ids.once)).toBe(false);

    expect(await say(chatId, `/schedules cancel ${ids.cron}`, 5)).toBe(`There is no active schedule #${ids.cron} in this conversation.`);
    expect(await say(chatId, '/schedules', 6)).toBe('No schedules in this conversation.');
    // Commands, never turn input: the model was asked nothing.
    expect(await system.sql`select 1 from messages m join sessions s on s.id = m.session_id join conversations c on c.id = s.conversation_id where c.chat_id = ${String(chatId)}`).toHaveLength(0);
  });

  it('a cancel naming another conversation’s schedule changes nothing there', async () => {
    const owner = 5302;
    const other = 5303;
    await say(owner, '/schedules', 1);
    const ids = await scheduleBoth(await conversationOf(owner));
    expect(await say(other, `/schedules cancel ${ids.cron}`, 1)).toBe(`There is no active schedule #${ids.cron} in this conversation.`);
    expect(await statusOf(ids.cron)).toBe('active');
    expect(await cronArmed(ids.cron)).toBe(true);
    expect(await say(other, '/schedules', 2)).toBe('No schedules in this conversation.');
    expect(await say(owner, '/schedules', 2)).toContain(`#${ids.cron} cron`);
  });

  it('answers arguments it cannot read with how to use it, and /help names the command', async () => {
    const chatId = 5304;
    expect(await say(chatId, '/schedules cancel soon', 1)).toBe('Use /schedules to list what is scheduled here, or /schedules cancel <id> to end one.');
    expect(await say(chatId, '/help', 2)).toContain('/schedules cancel <id>');
  });

  it('Telegram: the list carries a Cancel button per schedule; a press cancels that schedule once, a second press finds nothing', async () => {
    const chatId = 5305;
    await say(chatId, '/schedules', 1);
    const ids = await scheduleBoth(await conversationOf(chatId));
    await say(chatId, '/schedules', 2);
    const list = (await sentTo(chatId, 2))[1]!;
    expect(buttonsOf(list).sort()).toEqual([`Cancel #${ids.cron}`, `Cancel #${ids.once}`].sort());

    const pressed = await press(chatId, list.message_id, chatId, `Cancel #${ids.once}`);
    expect(pressed.status).toBe(200);
    // The press is answered (the spinner stops); what it did is said in the chat.
    expect(pressed.answer).not.toBeNull();
    expect((await sentTo(chatId, 3))[2]!.text).toBe(`Schedule #${ids.once} cancelled.`);
    expect(await statusOf(ids.once)).toBe('cancelled');
    expect(await onceArmed(ids.once)).toBe(false);
    expect(await statusOf(ids.cron)).toBe('active');

    await press(chatId, list.message_id, chatId, `Cancel #${ids.once}`);
    expect((await sentTo(chatId, 4))[3]!.text).toBe(`There is no active schedule #${ids.once} in this conversation.`);
    // Stored like any inbound event, each press once: two presses, two rows, both done.
    const rows = await system.sql<{ command: string; status: string }[]>`
      select command, status from inbound_events where conversation_id = ${await conversationOf(chatId)} and command like 'schedules:cancel:%' order by id`;
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { command: `schedules:cancel:${ids.once}`, status: 'done' },
      { command: `schedules:cancel:${ids.once}`, status: 'done' },
    ]);
  });

  it('Telegram: in a group, another member’s press on someone’s list reaches the presser’s own conversation and cancels nothing', async () => {
    const chatId = -5306;
    const owner = 5306;
    const other = 5307;
    await system.sendTelegram({ chatId, chatType: 'group', fromId: owner, text: '/schedules' });
    await sentTo(chatId, 1);
    const ids = await scheduleBoth(await conversationOf(chatId, String(owner)));
    await system.sendTelegram({ chatId, chatType: 'group', fromId: owner, text: '/schedules' });
    const list = (await sentTo(chatId, 2))[1]!;
    expect(buttonsOf(list)).toContain(`Cancel #${ids.cron}`);

    await press(chatId, list.message_id, other, `Cancel #${ids.cron}`);
    expect((await sentTo(chatId, 3))[2]!.text).toBe(`There is no active schedule #${ids.cron} in this conversation.`);
    expect(await statusOf(ids.cron)).toBe('active');
    expect(await cronArmed(ids.cron)).toBe(true);

    await press(chatId, list.message_id, owner, `Cancel #${ids.cron}`);
    expect((await sentTo(chatId, 4))[3]!.text).toBe(`Schedule #${ids.cron} cancelled.`);
    expect(await cronArmed(ids.cron)).toBe(false);
  });

  it('Slack: the list carries Cancel buttons; in a channel thread another member’s press cancels nothing, the owner’s cancels once', async () => {
    const channel = 'C5310';
    const root = '1795900000.000100';
    await system.sendSlack({ channel, user: 'U5310', text: '!schedules', ts: root, channel_type: 'channel' });
    await system.waitForSlack(channel, 1);
    const ids = await scheduleBoth(await conversationOf(channel, 'U5310', 'slack'));
    await system.sendSlack({ channel, user: 'U5310', text: '!schedules', thread_ts: root, channel_type: 'channel' });
    const list = ((await system.waitForSlack(channel, 2)) as unknown as { ts: string; thread_ts?: string; blocks?: unknown }[])[1]!;
    expect(list.thread_ts).toBe(root);
    expect(JSON.stringify(list.blocks)).toContain(`Cancel #${ids.cron}`);

    const pressSlack = (user: string) => postJson(`${system.simUrl}/control/slack/press`, { channel, ts: list.ts, user, text: `Cancel #${ids.cron}` }) as Promise<{ status: number }>;
    expect((await pressSlack('U5399')).status).toBe(200);
    expect((await system.waitForSlack(channel, 3))[2]).toMatchObject({ thread_ts: root, text: `There is no active schedule #${ids.cron} in this conversation.` });
    expect(await cronArmed(ids.cron)).toBe(true);

    expect((await pressSlack('U5310')).status).toBe(200);
    expect((await system.waitForSlack(channel, 4))[3]).toMatchObject({ thread_ts: root, text: `Schedule #${ids.cron} cancelled.` });
    expect(await statusOf(ids.cron)).toBe('cancelled');
    expect(await cronArmed(ids.cron)).toBe(false);
    await pressSlack('U5310');
    expect((await system.waitForSlack(channel, 5))[4]!.text).toBe(`There is no active schedule #${ids.cron} in this conversation.`);
  });

  it('Discord: /schedules answers with Cancel buttons; a press is answered deferred and cancels once', async () => {
    const channelId = '5000000000000005320';
    const userId = '4000000000000005320';
    const slash = await sendDiscordInteraction(system.simUrl, { name: 'schedules', channelId, userId });
    expect(slash.body).toEqual({ type: 5 });
    await waitForDiscordMessages(system.simUrl, channelId, 1);
    const ids = await scheduleBoth(await conversationOf(channelId, '', 'discord'));
    const second = await sendDiscordInteraction(system.simUrl, { name: 'schedules', channelId, userId });
    type Sent = { id: string; content: string; interaction_id?: string; components?: { components: { label: string }[] }[] };
    const answerTo = async (interactionId: string) => {
      await expect.poll(async () => (await discordSent(system.simUrl, channelId)).some((m) => m.interaction_id === interactionId)).toBe(true);
      return (await discordSent(system.simUrl, channelId)).find((m) => m.interaction_id === interactionId) as unknown as Sent;
    };
    const list = await answerTo(second.interaction.id);
    expect(list.components?.flatMap((row) => row.components.map((b) => b.label)).sort()).toEqual([`Cancel #${ids.cron}`, `Cancel #${ids.once}`].sort());

    const pressDiscord = () =>
      postJson(`${system.simUrl}/control/discord/interactions`, { channel_id: channelId, user: { id: userId, username: 'tester' }, component: { message_id: list.id, label: `Cancel #${ids.cron}` } }) as Promise<{
        status: number;
        body: { type: number };
        interaction: { id: string };
      }>;
    const pressed = await pressDiscord();
    expect(pressed.body).toEqual({ type: 5 });
    await expect.poll(async () => (await answerTo(pressed.interaction.id)).content).toBe(`Schedule #${ids.cron} cancelled.`);
    expect(await cronArmed(ids.cron)).toBe(false);
    const again = await pressDiscord();
    await expect.poll(async () => (await answerTo(again.interaction.id)).content).toBe(`There is no active schedule #${ids.cron} in this conversation.`);
    expect(await statusOf(ids.once)).toBe('active');
  });
});

describe('/schedules through the Telegram poller', () => {
  let system: TestSystem;
  let db: DbClient;
  let redis: Redis;
  let queue: ScheduleQueue;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, gatewayEnv: { TELEGRAM_MODE: 'polling' } });
    db = createDbClient(system.databaseUrl, { max: 2 });
    redis = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    queue = createScheduleQueue(redis, system.redisPrefix);
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await db?.close();
    await system?.close();
  });

  it('takes a Cancel press from getUpdates, answers its callback query and cancels the schedule', async () => {
    await expect.poll(async () => ((await (await fetch(`${system.simUrl}/control/telegram/webhook`)).json()) as { url: string | null }).url, { timeout: 15_000 }).toBeNull();
    const chatId = 5330;
    await system.sendTelegram({ chatId, text: '/schedules' });
    await system.waitForTelegram(chatId, 1);
    const [conversation] = await system.sql<{ id: number }[]>`select id::int from conversations where chat_id = ${String(chatId)}`;
    const deps: ScheduleDeps = { db: db.db, schedules: queue, log: createLogger('schedules-poller-test', 'silent') };
    const made = await makeSchedule(deps, { conversationId: conversation!.id, spec: { prompt: 'stand up', cron: '30 8 * * 1-5' }, createdBy: 'admin:test', maxActive: null });
    if (made.kind !== 'created') throw new Error(made.kind);
    const id = made.schedule.id;
    await system.sendTelegram({ chatId, text: '/schedules' });
    const list = (await system.waitForTelegram(chatId, 2))[1] as unknown as { message_id: number };
    const pressed = (await postJson(`${system.simUrl}/control/telegram/press`, { chat_id: chatId, message_id: list.message_id, from: { id: chatId }, text: `Cancel #${id}` })) as { queued: boolean };
    expect(pressed.queued).toBe(true);
    expect((await system.waitForTelegram(chatId, 3))[2]!.text).toBe(`Schedule #${id} cancelled.`);
    expect(await queue.getJobScheduler(`schedule-${id}`)).toBeUndefined();
    await expect.poll(async () => ((await (await fetch(`${system.simUrl}/control/telegram/callback-answers`)).json()) as unknown[]).length).toBe(1);
  });
});
