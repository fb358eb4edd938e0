import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { armDiscordFault, sendDiscordMessage, waitForDiscordGateway, waitForDiscordMessages } from '../support/discord.ts';
import { postJson, TestSystem } from '../support/system.ts';

/**
 * STATUS_REACTIONS (issue 22, item 4): what the user sees on their own message,
 * read from the simulated platforms. One system runs all three platforms; a
 * second, Telegram only, runs with the setting off. The first system shows 👀
 * at once (STATUS_REACTION_AFTER_MS=0), so its instant answers show every
 * reaction; the busy-mode system keeps the default (1 s), under which an
 * instant answer leaves none (issue 31).
 */
const poll = { timeout: 10_000, interval: 25 };
const failedNotice = 'Sorry, something went wrong and I could not answer that. Please try again.';

async function getJson(url: string): Promise<unknown> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

/** A user's Telegram message through the real webhook; its message_id is where the reaction goes. */
async function sendTelegramMessage(simUrl: string, chatId: number, text: string): Promise<number> {
  const body = (await postJson(`${simUrl}/control/telegram/updates`, { chat: { id: chatId, type: 'private' }, from: { id: chatId, first_name: 'Tester' }, text })) as {
    update: { message: { message_id: number } };
  };
  return body.update.message.message_id;
}

const telegramReactions = async (simUrl: string, chatId: number, messageId: number) =>
  ((await getJson(`${simUrl}/control/telegram/reactions?chat_id=${chatId}&message_id=${messageId}`)) as { emoji: string[]; calls: number });
const slackReactions = async (simUrl: string, channel: string, ts: string) =>
  ((await getJson(`${simUrl}/control/slack/reactions?channel=${channel}&ts=${ts}`)) as { names: string[] }).names;
const discordReactions = async (simUrl: string, channelId: string, messageId: string) =>
  ((await getJson(`${simUrl}/control/discord/reactions?channel_id=${channelId}&message_id=${messageId}`)) as { emoji: string[] }).emoji;

describe('status reactions on the user message', () => {
  let system: TestSystem;
  let sim: string;

  beforeAll(async () => {
    system = await TestSystem.start({ slack: true, discord: true, workerEnv: { MODEL_MAX_RETRIES: '0', STATUS_REACTION_AFTER_MS: '0' } });
    sim = system.simUrl;
    await waitForDiscordGateway(sim, { identifies: 1, connected: true });
    await system.setModelScript({ rules: [{ match: 'please fail', error: { status: 500, message: 'upstream exploded' } }] });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('Telegram: the answered message ends with 👍 (Telegram has no ✅ for bots)', async () => {
    const messageId = await sendTelegramMessage(sim, 8101, 'hello reactions');
    const [reply] = await system.waitForTelegram(8101, 1);
    expect(reply?.text).toBe('echo: hello reactions');
    await expect.poll(async () => (await telegramReactions(sim, 8101, messageId)).emoji, poll).toEqual(['👍']);
  });

  it('Telegram: a turn whose model fails ends with 👎 and the notice', async () => {
    const messageId = await sendTelegramMessage(sim, 8102, 'please fail');
    const [reply] = await system.waitForTelegram(8102, 1);
    expect(reply?.text).toBe(failedNotice);
    await expect.poll(async () => (await telegramReactions(sim, 8102, messageId)).emoji, poll).toEqual(['👎']);
  });

  it('Telegram: reactions refused (429) by the platform never keep the answer away', async () => {
    await postJson(`${sim}/control/telegram/faults`, { method: 'setMessageReaction', kind: '429', times: 50 });
    try {
      const messageId = await sendTelegramMessage(sim, 8103, 'still answered');
      const [reply] = await system.waitForTelegram(8103, 1);
      expect(reply?.text).toBe('echo: still answered');
      expect((await telegramReactions(sim, 8103, messageId)).emoji).toEqual([]);
    } finally {
      await fetch(`${sim}/control/telegram/faults`, { method: 'DELETE' });
    }
  });

  it('Slack: the answered message ends with white_check_mark, eyes removed', async () => {
    const sent = await system.sendSlack({ channel: 'D8201', user: 'U8201', text: 'hello slack reactions' });
    const [reply] = await system.waitForSlack('D8201', 1);
    expect(reply?.text).toBe('echo: hello slack reactions');
    await expect.poll(() => slackReactions(sim, 'D8201', sent.ts), poll).toEqual(['white_check_mark']);
  });

  it('Slack: a failed turn ends with x; refused reactions never keep the answer away', async () => {
    const failed = await system.sendSlack({ channel: 'D8202', user: 'U8202', text: 'please fail' });
    const [notice] = await system.waitForSlack('D8202', 1);
    expect(notice?.text).toBe(failedNotice);
    await expect.poll(() => slackReactions(sim, 'D8202', failed.ts), poll).toEqual(['x']);

    await postJson(`${sim}/control/slack/faults`, { method: 'reactions.add', kind: '500', times: 50 });
    try {
      const refused = await system.sendSlack({ channel: 'D8203', user: 'U8203', text: 'still answered' });
      const [reply] = await system.waitForSlack('D8203', 1);
      expect(reply?.text).toBe('echo: still answered');
      expect(await slackReactions(sim, 'D8203', refused.ts)).toEqual([]);
    } finally {
      await fetch(`${sim}/control/slack/faults`, { method: 'DELETE' });
    }
  });

  it('Discord: the answered message ends with ✅; a failed turn with ❌', async () => {
    const answered = await sendDiscordMessage(sim, { channelId: '5000000000000008301', content: 'hello discord reactions' });
    const [reply] = await waitForDiscordMessages(sim, '5000000000000008301', 1);
    expect(reply?.content).toBe('echo: hello discord reactions');
    await expect.poll(() => discordReactions(sim, '5000000000000008301', answered.messageId), poll).toEqual(['✅']);

    const failed = await sendDiscordMessage(sim, { channelId: '5000000000000008302', content: 'please fail' });
    const [notice] = await waitForDiscordMessages(sim, '5000000000000008302', 1);
    expect(notice?.content).toBe(failedNotice);
    await expect.poll(() => discordReactions(sim, '5000000000000008302', failed.messageId), poll).toEqual(['❌']);
  });

  it('Discord: refused reactions (503) never keep the answer away', async () => {
    await armDiscordFault(sim, { route: 'reactions', kind: '503', times: 50 });
    try {
      const sent = await sendDiscordMessage(sim, { channelId: '5000000000000008303', content: 'still answered' });
      const [reply] = await waitForDiscordMessages(sim, '5000000000000008303', 1);
      expect(reply?.content).toBe('echo: still answered');
      expect(await discordReactions(sim, '5000000000000008303', sent.messageId)).toEqual([]);
    } finally {
      await fetch(`${sim}/control/discord/faults`, { method: 'DELETE' });
    }
  });
});

/**
 * Busy mode `queue`: a message sent while a slow turn runs waits for its own
 * turn. It shows queued (Telegram ✍, Slack hourglass_flowing_sand, Discord ⏳)
 * meanwhile, then its own turn's 👀 replaces that, then done: at the end only
 * the done reaction is left, so the queued one was taken away.
 */
describe('queued while the conversation is busy (busy mode queue)', () => {
  let system: TestSystem;
  let sim: string;
  const slowMs = 4000;

  beforeAll(async () => {
    system = await TestSystem.start({ slack: true, discord: true, workerEnv: { BUSY_INPUT_MODE: 'queue' } });
    sim = system.simUrl;
    await waitForDiscordGateway(sim, { identifies: 1, connected: true });
    await system.setModelScript({ rules: [{ match: 'slow question', reply: 'a slow answer', delayMs: slowMs, times: 10 }] });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('Telegram: ✍ while the slow turn runs, then 👍', async () => {
    const slow = await sendTelegramMessage(sim, 8501, 'slow question');
    await expect.poll(async () => (await telegramReactions(sim, 8501, slow)).emoji, poll).toEqual(['👀']);
    const waiting = await sendTelegramMessage(sim, 8501, 'waits its turn');
    await expect.poll(async () => (await telegramReactions(sim, 8501, waiting)).emoji, { ...poll, timeout: slowMs - 500 }).toEqual(['✍']);
    const replies = await system.waitForTelegram(8501, 2);
    expect(replies.map((r) => r.text)).toEqual(['a slow answer', 'echo: waits its turn']);
    await expect.poll(async () => (await telegramReactions(sim, 8501, waiting)).emoji, poll).toEqual(['👍']);
    expect((await telegramReactions(sim, 8501, slow)).emoji).toEqual(['👍']);
  });

  it('Slack: hourglass_flowing_sand while the slow turn runs, then only white_check_mark', async () => {
    const slow = await system.sendSlack({ channel: 'D8502', user: 'U8502', text: 'slow question' });
    await expect.poll(() => slackReactions(sim, 'D8502', slow.ts), poll).toEqual(['eyes']);
    const waiting = await system.sendSlack({ channel: 'D8502', user: 'U8502', text: 'waits its turn' });
    await expect.poll(() => slackReactions(sim, 'D8502', waiting.ts), { ...poll, timeout: slowMs - 500 }).toEqual(['hourglass_flowing_sand']);
    const replies = await system.waitForSlack('D8502', 2);
    expect(replies.map((r) => r.text)).toEqual(['a slow answer', 'echo: waits its turn']);
    await expect.poll(() => slackReactions(sim, 'D8502', waiting.ts), poll).toEqual(['white_check_mark']);
  });

  it('Discord: ⏳ while the slow turn runs, then only ✅', async () => {
    const channelId = '5000000000000008503';
    const slow = await sendDiscordMessage(sim, { channelId, content: 'slow question' });
    await expect.poll(() => discordReactions(sim, channelId, slow.messageId), poll).toEqual(['👀']);
    const waiting = await sendDiscordMessage(sim, { channelId, content: 'waits its turn' });
    await expect.poll(() => discordReactions(sim, channelId, waiting.messageId), { ...poll, timeout: slowMs - 500 }).toEqual(['⏳']);
    const replies = await waitForDiscordMessages(sim, channelId, 2);
    expect(replies.map((r) => r.content)).toEqual(['a slow answer', 'echo: waits its turn']);
    await expect.poll(() => discordReactions(sim, channelId, waiting.messageId), poll).toEqual(['✅']);
  });

  // Issue 31: the two calls of an instant turn were a tenth of its worker CPU; its reply says it was seen.
  it('by default an instant answer leaves no reaction; a turn still running after STATUS_REACTION_AFTER_MS shows 👀, then 👍', async () => {
    const instant = await sendTelegramMessage(sim, 8505, 'a quick one');
    expect((await system.waitForTelegram(8505, 1))[0]?.text).toBe('echo: a quick one');
    // A slow turn started after that answer shows 👀 only past the delay: by then the instant turn's would have gone out too.
    const slow = await sendTelegramMessage(sim, 8506, 'slow question');
    await expect.poll(async () => (await telegramReactions(sim, 8506, slow)).emoji, poll).toEqual(['👀']);
    expect((await telegramReactions(sim, 8505, instant)).emoji).toEqual([]);
    await system.waitForTelegram(8506, 1, slowMs + 10_000);
    await expect.poll(async () => (await telegramReactions(sim, 8506, slow)).emoji, poll).toEqual(['👍']);
  });

  it('a command sent while the turn runs shows no queued reaction: nothing would take it away', async () => {
    const slow = await sendTelegramMessage(sim, 8504, 'slow question');
    await expect.poll(async () => (await telegramReactions(sim, 8504, slow)).emoji, poll).toEqual(['👀']);
    const command = await sendTelegramMessage(sim, 8504, '/status');
    // A message after it: the waiting input is read again, the command with it.
    const message = await sendTelegramMessage(sim, 8504, 'after the command');
    await expect.poll(async () => (await telegramReactions(sim, 8504, message)).emoji, { ...poll, timeout: slowMs - 500 }).toEqual(['✍']);
    const replies = await system.waitForTelegram(8504, 3);
    expect(replies.map((r) => r.text)).toEqual(['a slow answer', expect.stringMatching(/^Session \d+/), 'echo: after the command']);
    await expect.poll(async () => (await telegramReactions(sim, 8504, message)).emoji, poll).toEqual(['👍']);
    expect((await telegramReactions(sim, 8504, command)).emoji).toEqual([]);
  });
});

describe('STATUS_REACTIONS=off', () => {
  let system: TestSystem;
  afterAll(async () => {
    await system?.close();
  });

  it('answers without a single reaction call', async () => {
    system = await TestSystem.start({ workerEnv: { STATUS_REACTIONS: 'off' } });
    const messageId = await sendTelegramMessage(system.simUrl, 8401, 'no reactions please');
    const [reply] = await system.waitForTelegram(8401, 1);
    expect(reply?.text).toBe('echo: no reactions please');
    const seen = await telegramReactions(system.simUrl, 8401, messageId);
    expect({ emoji: seen.emoji, calls: seen.calls }).toEqual({ emoji: [], calls: 0 });
  });
});
