import { describe, expect, it } from 'vitest';
import { PlatformError } from '../errors.ts';
import { parseDiscordMessage } from './parse-message.ts';

const botUserId = '900000000000000001';
const context = { botUserId, applicationId: '900000000000000001' };
const author = { id: '300000000000000042', username: 'ada' };

function message(fields: Record<string, unknown> = {}) {
  return {
    id: '500000000000000010',
    channel_id: '400000000000000007',
    author,
    content: 'hello',
    timestamp: '2024-01-01T00:00:00.000Z',
    type: 0,
    mentions: [],
    ...fields,
  };
}

describe('parseDiscordMessage', () => {
  it('answers a DM without a mention, keeping the text exactly and keying the conversation by channel', () => {
    expect(parseDiscordMessage(message({ content: '  Hi **there**  ' }), context)).toEqual({
      kind: 'message',
      message: {
        platform: 'discord',
        eventId: '500000000000000010',
        userId: author.id,
        text: '  Hi **there**  ',
        address: { platform: 'discord', accountId: botUserId, chatId: '400000000000000007', threadId: '', userScope: '' },
        replyTarget: { channelId: '400000000000000007', userMessageId: '500000000000000010' },
      },
    });
  });

  it('answers in a guild only when mentioned, scoped per user, replying to the message', () => {
    const guild = { guild_id: '600000000000000001' };
    expect(parseDiscordMessage(message({ ...guild, content: 'just chatting' }), context)).toEqual({ kind: 'ignored', reason: 'not_addressed' });
    const mentioned = parseDiscordMessage(message({ ...guild, content: `<@${botUserId}> what time is it`, mentions: [{ id: botUserId, username: 'sb', bot: true }] }), context);
    expect(mentioned.kind).toBe('message');
    if (mentioned.kind !== 'message') return;
    expect(mentioned.message.text).toBe(`<@${botUserId}> what time is it`);
    expect(mentioned.message.address.userScope).toBe(author.id);
    expect(mentioned.message.replyTarget).toEqual({ channelId: '400000000000000007', messageId: '500000000000000010', userMessageId: '500000000000000010' });
    expect(mentioned.message.roles).toBeUndefined();
  });

  it('passes the guild member roles on, for role-based allowlists', () => {
    const result = parseDiscordMessage(
      message({ guild_id: '600000000000000001', mentions: [{ id: botUserId }], member: { roles: ['700000000000000001', '700000000000000002'], joined_at: 'x' } }),
      context,
    );
    expect(result.kind === 'message' && result.message.roles).toEqual(['700000000000000001', '700000000000000002']);
  });

  it('answers a reply to the bot and any message in a thread the bot takes part in', () => {
    const guild = { guild_id: '600000000000000001' };
    const reply = message({ ...guild, type: 19, content: 'and you?', referenced_message: { id: '1', author: { id: botUserId, username: 'sb' } } });
    expect(parseDiscordMessage(reply, context).kind).toBe('message');
    const inThread = message({ ...guild, channel_id: '700000000000000003', content: 'follow-up' });
    expect(parseDiscordMessage(inThread, { ...context, botThreadIds: new Set(['700000000000000003']) }).kind).toBe('message');
    expect(parseDiscordMessage(inThread, { ...context, botThreadIds: (id) => id === '700000000000000003' }).kind).toBe('message');
    const threaded = parseDiscordMessage(inThread, { ...context, botThreadIds: new Set(['700000000000000003']) });
    // A thread is its own channel: the thread's channel id is the chat.
    expect(threaded.kind === 'message' && threaded.message.address).toMatchObject({ chatId: '700000000000000003', threadId: '' });
  });

  it('falls back to the bot user id as the account when no application id is known', () => {
    const result = parseDiscordMessage(message(), { botUserId });
    expect(result.kind === 'message' && result.message.address.accountId).toBe(botUserId);
  });

  it('ignores its own messages, other bots, webhooks, system messages and empty content', () => {
    expect(parseDiscordMessage(message({ author: { id: botUserId, username: 'sb', bot: true } }), context)).toEqual({ kind: 'ignored', reason: 'own_message' });
    expect(parseDiscordMessage(message({ author: { id: '1', username: 'other', bot: true } }), context)).toEqual({ kind: 'ignored', reason: 'bot_author' });
    expect(parseDiscordMessage(message({ webhook_id: '77' }), context)).toEqual({ kind: 'ignored', reason: 'webhook_message' });
    expect(parseDiscordMessage(message({ type: 7 }), context)).toEqual({ kind: 'ignored', reason: 'unsupported_type' });
    expect(parseDiscordMessage(message({ content: '' }), context)).toEqual({ kind: 'ignored', reason: 'no_text' });
  });

  it('rejects something that is not a message with INVALID_PAYLOAD', () => {
    for (const body of [null, 'text', {}, message({ id: 'abc' }), message({ author: undefined }), message({ channel_id: 5 }), message({ mentions: 'x' })]) {
      expect(() => parseDiscordMessage(body, context)).toThrow(PlatformError);
    }
  });

  it('takes attachments as references by their URL, a voice message without text included', () => {
    const attachments = [{ id: '1', filename: 'voice-message.ogg', content_type: 'audio/ogg', size: 300, url: 'https://cdn.discordapp.com/attachments/4/1/voice-message.ogg?ex=1' }];
    const result = parseDiscordMessage(message({ content: '', attachments, flags: 8192 }), context);
    expect(result.kind === 'message' && result.message).toMatchObject({
      text: '',
      attachments: [{ kind: 'audio', ref: attachments[0]?.url, mime: 'audio/ogg', name: 'voice-message.ogg', size: 300 }],
    });
    expect(parseDiscordMessage(message({ content: '' }), context)).toEqual({ kind: 'ignored', reason: 'no_text' });
  });
});
