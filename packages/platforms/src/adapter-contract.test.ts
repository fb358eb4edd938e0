import { resolveConversationKey } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { createDiscordSender, parseDiscordMessage } from './discord/index.ts';
import { PlatformError } from './errors.ts';
import { createSlackSender, parseSlackEvent } from './slack/index.ts';
import { createTelegramSender, parseTelegramUpdate } from './telegram/index.ts';
import type { ParseResult, PlatformSender } from './types.ts';

/**
 * One adapter, described by how its platform would deliver the same few
 * situations. The contract below runs the same cases against every adapter,
 * so the three platforms cannot drift apart in what they let through.
 */
interface AdapterFixture {
  platform: 'telegram' | 'slack' | 'discord';
  parse(body: unknown): ParseResult;
  direct(text: string, eventId: string, userId: string): unknown;
  groupUnaddressed(text: string): unknown;
  groupMention(text: string, userId: string): unknown;
  fromTheBot(text: string): unknown;
  fromAnotherBot(text: string): unknown;
  malformed: unknown[];
  sender: PlatformSender;
  limit: number;
}

const tgBot = '1000001';
const slackBot = { botUserId: 'UBOT', botId: 'BBOT' };
const discordBot = '900000000000000001';

const telegram: AdapterFixture = {
  platform: 'telegram',
  parse: (body) => parseTelegramUpdate(body, { botId: tgBot, botUsername: 'sb_bot' }),
  direct: (text, eventId, userId) => ({ update_id: Number(eventId), message: { message_id: 1, date: 1, chat: { id: Number(userId), type: 'private' }, from: { id: Number(userId), is_bot: false }, text } }),
  groupUnaddressed: (text) => ({ update_id: 2, message: { message_id: 2, date: 1, chat: { id: -5, type: 'supergroup' }, from: { id: 7, is_bot: false }, text } }),
  groupMention: (text, userId) => ({ update_id: 3, message: { message_id: 3, date: 1, chat: { id: -5, type: 'supergroup' }, from: { id: Number(userId), is_bot: false }, text: `@sb_bot ${text}` } }),
  fromTheBot: (text) => ({ update_id: 4, message: { message_id: 4, date: 1, chat: { id: 9, type: 'private' }, from: { id: Number(tgBot), is_bot: true }, text } }),
  fromAnotherBot: (text) => ({ update_id: 5, message: { message_id: 5, date: 1, chat: { id: 9, type: 'private' }, from: { id: 55, is_bot: true }, text } }),
  malformed: [null, 'x', { update_id: 'one' }, { update_id: 1, message: { chat: {} } }],
  sender: createTelegramSender({ token: '1000001:abc', apiRoot: 'http://127.0.0.1:9' }),
  limit: 4096,
};

const slackEnvelope = (event: Record<string, unknown>, eventId = 'Ev1') => ({ type: 'event_callback', team_id: 'T1', api_app_id: 'A1', event_id: eventId, event_time: 1, event });
const slack: AdapterFixture = {
  platform: 'slack',
  parse: (body) => parseSlackEvent(body, slackBot),
  direct: (text, eventId, userId) => slackEnvelope({ type: 'message', channel: 'D1', channel_type: 'im', user: userId, text, ts: '1.1' }, eventId),
  groupUnaddressed: (text) => slackEnvelope({ type: 'message', channel: 'C1', channel_type: 'channel', user: 'U7', text, ts: '1.2' }),
  groupMention: (text, userId) => slackEnvelope({ type: 'app_mention', channel: 'C1', user: userId, text: `<@UBOT> ${text}`, ts: '1.3' }),
  fromTheBot: (text) => slackEnvelope({ type: 'message', channel: 'D1', channel_type: 'im', user: 'UBOT', text, ts: '1.4' }),
  fromAnotherBot: (text) => slackEnvelope({ type: 'message', channel: 'D1', channel_type: 'im', bot_id: 'BOTHER', text, ts: '1.5' }),
  malformed: [null, 'x', { type: 'event_callback' }, slackEnvelope({ type: 'message', channel: 5 })],
  sender: createSlackSender({ token: 'xoxb-1', apiUrl: 'http://127.0.0.1:9/api/' }),
  limit: 4000,
};

const discordMessage = (fields: Record<string, unknown>) => ({ id: '500000000000000001', channel_id: '400000000000000001', type: 0, mentions: [], timestamp: '2024-01-01T00:00:00Z', ...fields });
const discord: AdapterFixture = {
  platform: 'discord',
  parse: (body) => parseDiscordMessage(body, { botUserId: discordBot, applicationId: discordBot }),
  direct: (text, eventId, userId) => discordMessage({ id: eventId, author: { id: userId, username: 'u' }, content: text }),
  groupUnaddressed: (text) => discordMessage({ guild_id: '600000000000000001', author: { id: '300000000000000007', username: 'u' }, content: text }),
  groupMention: (text, userId) =>
    discordMessage({ guild_id: '600000000000000001', author: { id: userId, username: 'u' }, content: `<@${discordBot}> ${text}`, mentions: [{ id: discordBot, username: 'sb', bot: true }] }),
  fromTheBot: (text) => discordMessage({ author: { id: discordBot, username: 'sb', bot: true }, content: text }),
  fromAnotherBot: (text) => discordMessage({ author: { id: '300000000000000055', username: 'other', bot: true }, content: text }),
  malformed: [null, 'x', {}, discordMessage({ id: 'abc', author: { id: '1', username: 'u' }, content: 'x' })],
  sender: createDiscordSender({ token: 'd', apiUrl: 'http://127.0.0.1:9/api' }),
  limit: 2000,
};

describe.each([telegram, slack, discord])('adapter contract: $platform', (adapter) => {
  it('turns a direct message into one inbound message with the exact text, an event id and a one-to-one address', () => {
    const result = adapter.parse(adapter.direct('  Hello, *world*  ', '7700001', '42424242'));
    expect(result.kind).toBe('message');
    if (result.kind !== 'message') return;
    expect(result.message).toMatchObject({ platform: adapter.platform, eventId: '7700001', userId: '42424242', text: '  Hello, *world*  ' });
    expect(result.message.address.userScope).toBe('');
    expect(result.message.replyTarget).toBeTruthy();
  });

  it('gives a re-delivery the same event id and conversation, so it is stored once', () => {
    const once = adapter.parse(adapter.direct('again', '7700002', '42424242'));
    const twice = adapter.parse(adapter.direct('again', '7700002', '42424242'));
    expect(once.kind === 'message' && twice.kind === 'message').toBe(true);
    if (once.kind !== 'message' || twice.kind !== 'message') return;
    expect(twice.message.eventId).toBe(once.message.eventId);
    expect(resolveConversationKey(twice.message.address)).toBe(resolveConversationKey(once.message.address));
  });

  it('answers in groups only when addressed, one conversation per user there', () => {
    expect(adapter.parse(adapter.groupUnaddressed('just chatting')).kind).toBe('ignored');
    const a = adapter.parse(adapter.groupMention('hi', '42424242'));
    const b = adapter.parse(adapter.groupMention('hi', '42424243'));
    expect(a.kind === 'message' && b.kind === 'message').toBe(true);
    if (a.kind !== 'message' || b.kind !== 'message') return;
    expect(a.message.address.userScope).toBe('42424242');
    expect(resolveConversationKey(a.message.address)).not.toBe(resolveConversationKey(b.message.address));
  });

  it("ignores the bot's own messages and other bots'", () => {
    expect(adapter.parse(adapter.fromTheBot('echo')).kind).toBe('ignored');
    expect(adapter.parse(adapter.fromAnotherBot('beep')).kind).toBe('ignored');
  });

  it('rejects what is not a platform payload with INVALID_PAYLOAD', () => {
    for (const body of adapter.malformed) {
      expect(() => adapter.parse(body)).toThrow(PlatformError);
    }
  });

  it("sends through a sender that knows the platform's message limit", () => {
    expect(adapter.sender.platform).toBe(adapter.platform);
    expect(adapter.sender.messageLimit).toBe(adapter.limit);
    expect(adapter.sender.typingIntervalMs).toBeGreaterThanOrEqual(0);
  });
});
