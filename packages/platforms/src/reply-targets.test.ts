import { describe, expect, it } from 'vitest';
import { readDiscordReplyTarget } from './discord/reply-target.ts';
import { readSlackReplyTarget } from './slack/reply-target.ts';
import { readTelegramReplyTarget } from './telegram/reply-target.ts';

// Reply targets come back from jsonb: each sender reads them through its platform's schema instead of a cast.
describe('reading a stored reply target', () => {
  it('gives back every target the parsers write, unchanged', () => {
    for (const target of [{ chatId: 42 }, { chatId: -100, replyToMessageId: 10 }, { chatId: -5, messageThreadId: 77, replyToMessageId: 10 }]) {
      expect(readTelegramReplyTarget(target)).toEqual(target);
    }
    for (const target of [{ channel: 'D100' }, { channel: 'C200', threadTs: '1700000001.000200' }]) expect(readSlackReplyTarget(target)).toEqual(target);
    for (const target of [
      { channelId: '400000000000000007' },
      { channelId: '400000000000000007', messageId: '500000000000000010' },
      { channelId: '400000000000000007', interactionToken: 'tok-abc', applicationId: '900000000000000001' },
    ]) {
      expect(readDiscordReplyTarget(target)).toEqual(target);
    }
  });

  it('refuses a target without its destination as REJECTED, so the send is not retried', () => {
    expect(() => readTelegramReplyTarget({ chatId: '' })).toThrow(expect.objectContaining({ code: 'REJECTED', retryable: false }));
    expect(() => readTelegramReplyTarget({ messageThreadId: 3 })).toThrow(expect.objectContaining({ code: 'REJECTED' }));
    expect(() => readSlackReplyTarget({ channel: '' })).toThrow(expect.objectContaining({ code: 'REJECTED', message: 'slack reply target has no channel' }));
    expect(() => readDiscordReplyTarget({ channelId: 7 })).toThrow(expect.objectContaining({ code: 'REJECTED', message: 'discord: reply target has no channelId' }));
  });

  it('drops a malformed optional field rather than refusing the reply', () => {
    expect(readTelegramReplyTarget({ chatId: 1, messageThreadId: 'x' })).toEqual({ chatId: 1 });
    expect(readSlackReplyTarget({ channel: 'C1', threadTs: '' })).toEqual({ channel: 'C1' });
    expect(readDiscordReplyTarget({ channelId: 'c', messageId: 5 })).toEqual({ channelId: 'c' });
  });
});
