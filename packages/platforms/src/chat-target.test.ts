import { describe, expect, it } from 'vitest';
import { chatReplyTarget } from './chat-target.ts';
import { readDiscordReplyTarget } from './discord/reply-target.ts';
import { readSlackReplyTarget } from './slack/reply-target.ts';
import { readTelegramReplyTarget } from './telegram/reply-target.ts';

describe(chatReplyTarget.name, () => {
  it('targets the chat and its thread, never a message, in the shape each sender reads', () => {
    const telegram = chatReplyTarget({ platform: 'telegram', accountId: '1', chatId: '-100200', threadId: '42', userScope: '7' });
    expect(readTelegramReplyTarget(telegram)).toEqual({ chatId: -100200, messageThreadId: 42 });
    expect(readTelegramReplyTarget(chatReplyTarget({ platform: 'telegram', accountId: '1', chatId: '501', threadId: '', userScope: '' }))).toEqual({ chatId: 501 });
    const slack = chatReplyTarget({ platform: 'slack', accountId: 'T1', chatId: 'C1', threadId: '1700000000.000100', userScope: 'U1' });
    expect(readSlackReplyTarget(slack)).toEqual({ channel: 'C1', threadTs: '1700000000.000100' });
    expect(readDiscordReplyTarget(chatReplyTarget({ platform: 'discord', accountId: 'A', chatId: '99', threadId: '', userScope: '5' }))).toEqual({ channelId: '99' });
  });
});
