import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  armDiscordFault,
  discordApplicationId,
  discordGatewayAction,
  discordSent,
  sendDiscordInteraction,
  sendDiscordMessage,
  waitForDiscordGateway,
  waitForDiscordMessages,
} from '../support/discord.ts';
import { TestSystem } from '../support/system.ts';

const guildId = '6000000000000000001';
let nextChannel = 5_000_000_000_000_000_100n;
/** A fresh channel id per case, so each case reads only its own conversation. */
const channel = () => String(nextChannel++);

describe('Discord end to end', () => {
  let system: TestSystem;
  let sim: string;

  beforeAll(async () => {
    system = await TestSystem.start({ discord: true });
    sim = system.simUrl;
    await waitForDiscordGateway(sim, { identifies: 1, connected: true });
  });
  afterAll(async () => {
    await system?.close();
  });

  async function storedEvents(chatId: string): Promise<{ event_id: string; text: string }[]> {
    return system.sql<{ event_id: string; text: string }[]>`
      select e.event_id, e.text from inbound_events e join conversations c on c.id = e.conversation_id
      where c.platform = 'discord' and c.chat_id = ${chatId} order by e.id`;
  }

  /** Every dispatch is handled in order, so once a later message is answered an earlier one has been handled too. */
  async function barrier(): Promise<void> {
    const id = channel();
    await sendDiscordMessage(sim, { channelId: id, content: 'barrier' });
    await waitForDiscordMessages(sim, id, 1);
  }

  it('answers a DM from the Gateway and keeps the transcript', async () => {
    const id = channel();
    const { messageId } = await sendDiscordMessage(sim, { channelId: id, content: 'Hello, Discord!' });
    const [reply] = await waitForDiscordMessages(sim, id, 1);
    expect(reply).toMatchObject({ content: 'echo: Hello, Discord!', nonce: expect.stringMatching(/^sb\d+$/) });
    expect(reply?.message_reference).toBeUndefined();
    expect(await storedEvents(id)).toEqual([{ event_id: messageId, text: 'Hello, Discord!' }]);
    const [conversation] = await system.sql<{ account_id: string; user_scope: string }[]>`select account_id, user_scope from conversations where chat_id = ${id}`;
    expect(conversation).toEqual({ account_id: discordApplicationId, user_scope: '' });
    const [outbox] = await system.sql<{ status: string; platform_message_id: string }[]>`
      select o.status, o.platform_message_id from outbox o join conversations c on c.id = o.conversation_id where c.chat_id = ${id}`;
    expect(outbox).toEqual({ status: 'sent', platform_message_id: reply?.id });
  });

  it('answers a guild message that mentions the bot, replying to it', async () => {
    const id = channel();
    const content = `<@${discordApplicationId}> what is new?`;
    const { messageId } = await sendDiscordMessage(sim, { channelId: id, guildId, mentionsBot: true, content });
    const [reply] = await waitForDiscordMessages(sim, id, 1);
    expect(reply?.content).toBe(`echo: ${content}`);
    expect(reply?.message_reference?.message_id).toBe(messageId);
    const [conversation] = await system.sql<{ user_scope: string }[]>`select user_scope from conversations where chat_id = ${id}`;
    expect(conversation?.user_scope).toBe('4000000000000000042');
  });

  it('ignores guild messages without a mention, its own messages and other bots, storing nothing', async () => {
    const quiet = channel();
    await sendDiscordMessage(sim, { channelId: quiet, guildId, content: 'just chatting among ourselves' });
    const own = channel();
    await sendDiscordMessage(sim, { channelId: own, content: 'I am the bot', authorId: discordApplicationId, authorBot: true });
    const otherBot = channel();
    await sendDiscordMessage(sim, { channelId: otherBot, content: 'beep', authorId: '4000000000000000077', authorBot: true });
    await barrier();
    for (const id of [quiet, own, otherBot]) {
      expect(await storedEvents(id)).toEqual([]);
      expect(await discordSent(sim, id)).toEqual([]);
    }
  });

  it('answers without a mention in a thread the bot was brought into, and shows typing while it works', async () => {
    const thread = channel();
    await sendDiscordMessage(sim, { channelId: thread, guildId, channelType: 11, mentionsBot: true, content: 'come and help' });
    await waitForDiscordMessages(sim, thread, 1);
    await system.setModelScript({ rules: [{ match: 'slowly', delayMs: 900 }] });
    try {
      await sendDiscordMessage(sim, { channelId: thread, guildId, channelType: 11, content: 'and now, slowly' });
      const replies = await waitForDiscordMessages(sim, thread, 2);
      expect(replies.map((r) => r.content)).toEqual(['echo: come and help', 'echo: and now, slowly']);
    } finally {
      await system.setModelScript({});
    }
    const typing = (await (await fetch(`${sim}/control/discord/typing?channel_id=${thread}`)).json()) as unknown[];
    expect(typing.length).toBeGreaterThanOrEqual(1);
  });

  it('answers a message replayed by a resume only once', async () => {
    const id = channel();
    const first = await sendDiscordMessage(sim, { channelId: id, content: 'remember me' });
    await waitForDiscordMessages(sim, id, 1);
    const before = await waitForDiscordGateway(sim, { connected: true });
    // The connection drops and Discord replays from before the stored message, as after a resume from an older sequence.
    await discordGatewayAction(sim, { action: 'drop', replay_from: (first.s as number) - 1 });
    await waitForDiscordGateway(sim, { resumes: before.resumes + 1, connected: true });
    await sendDiscordMessage(sim, { channelId: id, content: 'and now this' });
    const replies = await waitForDiscordMessages(sim, id, 2);
    expect(replies.map((r) => r.content)).toEqual(['echo: remember me', 'echo: and now this']);
    expect((await storedEvents(id)).map((e) => e.text)).toEqual(['remember me', 'and now this']);
  });

  it('rejects an interaction with a bad or missing signature with 401 and stores nothing', async () => {
    const id = channel();
    const bad = await sendDiscordInteraction(sim, { name: 'help', channelId: id, signing: 'bad' });
    const missing = await sendDiscordInteraction(sim, { name: 'help', channelId: id, signing: 'none' });
    expect([bad.status, missing.status]).toEqual([401, 401]);
    expect(await storedEvents(id)).toEqual([]);
    expect(await system.sql`select 1 from conversations where chat_id = ${id}`).toHaveLength(0);
  });

  it('answers PING with PONG', async () => {
    const ping = await sendDiscordInteraction(sim, { ping: true, channelId: channel() });
    expect(ping).toMatchObject({ status: 200, body: { type: 1 } });
  });

  it('defers a slash command at once and answers it through the interaction afterwards', async () => {
    const id = channel();
    const result = await sendDiscordInteraction(sim, { name: 'busy', options: [{ name: 'mode', value: 'queue' }], channelId: id, guildId });
    expect(result).toMatchObject({ status: 200, body: { type: 5 } });
    const [reply] = await waitForDiscordMessages(sim, id, 1);
    expect(reply).toMatchObject({ followup: true, original: true, interaction_id: result.interaction.id });
    expect(reply?.content).toMatch(/^Busy mode is now queue/);
    expect(await storedEvents(id)).toEqual([{ event_id: result.interaction.id, text: '/busy queue' }]);
    // Same conversation as the user's messages in that channel: a mention there now runs in queue mode.
    const [conversation] = await system.sql<{ busy_mode: string }[]>`select busy_mode from conversations where chat_id = ${id}`;
    expect(conversation?.busy_mode).toBe('queue');
  });

  it('keeps members of a group DM apart: each user\'s slash command has its own conversation (issue 30, finding 8)', async () => {
    const id = channel();
    // Before, both shared the channel's one conversation, as if it were each one's DM with the bot.
    await sendDiscordInteraction(sim, { name: 'busy', options: [{ name: 'mode', value: 'queue' }], channelId: id, groupDm: true, userId: '4000000000000000071' });
    await sendDiscordInteraction(sim, { name: 'busy', options: [{ name: 'mode', value: 'steer' }], channelId: id, groupDm: true, userId: '4000000000000000072' });
    await waitForDiscordMessages(sim, id, 2);
    const rows = await system.sql<{ user_scope: string; busy_mode: string }[]>`select user_scope, busy_mode from conversations where chat_id = ${id} order by user_scope`;
    expect(rows.map((r) => [r.user_scope, r.busy_mode])).toEqual([
      ['4000000000000000071', 'queue'],
      ['4000000000000000072', 'steer'],
    ]);
  });

  it('splits a long reply at 2,000 characters, in order, with a nonce per part and the reply marker on the first', async () => {
    await system.setModelScript({ rules: [{ match: 'long answer', replyRepeat: { text: 'lorem ipsum dolor sit amet ', count: 180 } }] });
    try {
      const id = channel();
      const { messageId } = await sendDiscordMessage(sim, { channelId: id, guildId, mentionsBot: true, content: 'a long answer please' });
      const parts = await waitForDiscordMessages(sim, id, 3);
      expect(parts).toHaveLength(3);
      for (const part of parts) expect(part.content.length).toBeLessThanOrEqual(2000);
      expect(parts.map((p) => p.message_reference?.message_id)).toEqual([messageId, undefined, undefined]);
      const nonces = parts.map((p) => p.nonce);
      expect(new Set(nonces).size).toBe(3);
      for (const nonce of nonces) expect(String(nonce)).toMatch(/^sb\d+$/);
      expect(parts.map((p) => BigInt(p.id))).toEqual(parts.map((p) => BigInt(p.id)).sort((a, b) => (a < b ? -1 : 1)));
      const whole = 'lorem ipsum dolor sit amet '.repeat(180).trim();
      expect(parts.map((p) => p.content).join(' ').replace(/\s+/g, ' ').trim()).toBe(whole);
    } finally {
      await system.setModelScript({});
    }
  });

  it('delivers exactly once after a 429, waiting what Discord said', async () => {
    const id = channel();
    await armDiscordFault(sim, { route: 'messages', kind: '429', times: 1, retryAfter: 1 });
    await sendDiscordMessage(sim, { channelId: id, content: 'rate limited?' });
    await waitForDiscordMessages(sim, id, 1);
    expect(await (await fetch(`${sim}/control/discord/faults`)).json()).toEqual([]);
    await sendDiscordMessage(sim, { channelId: id, content: 'still there?' });
    const replies = await waitForDiscordMessages(sim, id, 2);
    expect(replies.map((r) => r.content)).toEqual(['echo: rate limited?', 'echo: still there?']);
  });

  it('notices lost heartbeat ACKs, resumes, and answers every message exactly once', async () => {
    const before = await waitForDiscordGateway(sim, { connected: true });
    await discordGatewayAction(sim, { action: 'stop-acks' });
    const channels = [channel(), channel(), channel()];
    const sent = [];
    for (const [i, id] of channels.entries()) sent.push(await sendDiscordMessage(sim, { channelId: id, content: `during the outage ${i}` }));
    // The half-open connection delivers nothing; the client must notice on its own.
    expect(sent.map((s) => s.delivered)).toEqual([false, false, false]);
    const after = await waitForDiscordGateway(sim, { resumes: before.resumes + 1, connected: true });
    expect(after.identifies).toBe(before.identifies);
    expect(after.last_close_code).not.toBe(1000);
    for (const [i, id] of channels.entries()) {
      const [reply] = await waitForDiscordMessages(sim, id, 1);
      expect(reply?.content).toBe(`echo: during the outage ${i}`);
    }
    // A duplicate reply would arrive before this second one.
    for (const [i, id] of channels.entries()) await sendDiscordMessage(sim, { channelId: id, content: `after ${i}` });
    for (const [i, id] of channels.entries()) {
      expect((await waitForDiscordMessages(sim, id, 2)).map((r) => r.content)).toEqual([`echo: during the outage ${i}`, `echo: after ${i}`]);
      expect(await storedEvents(id)).toHaveLength(2);
    }
  });
});
