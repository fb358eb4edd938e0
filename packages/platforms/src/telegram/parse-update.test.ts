import { describe, expect, it } from 'vitest';
import { PlatformError } from '../errors.ts';
import { parseTelegramUpdate, readTelegramBotId } from './parse-update.ts';

const context = { botId: '1000001', botUsername: 'switchboard_sim_bot' };
const user = { id: 42, is_bot: false, first_name: 'Ada' };

function update(message: Record<string, unknown>, updateId = 7) {
  return { update_id: updateId, message: { message_id: 10, date: 1_700_000_000, from: user, chat: { id: 42, type: 'private' }, ...message } };
}

describe('parseTelegramUpdate', () => {
  it('turns a private text message into one conversation per chat, keeping the text exactly', () => {
    const result = parseTelegramUpdate(update({ text: '  Hello *there*  ' }), context);
    expect(result).toEqual({
      kind: 'message',
      message: {
        platform: 'telegram',
        eventId: '7',
        userId: '42',
        text: '  Hello *there*  ',
        address: { platform: 'telegram', accountId: '1000001', chatId: '42', threadId: '', userScope: '' },
        replyTarget: { chatId: 42, userMessageId: 10 },
      },
    });
  });

  it('scopes group conversations per user and answers only when addressed', () => {
    const group = { chat: { id: -100, type: 'supergroup' } };
    expect(parseTelegramUpdate(update({ ...group, text: 'just chatting' }), context)).toEqual({ kind: 'ignored', reason: 'not_addressed' });
    const mention = parseTelegramUpdate(update({ ...group, text: 'hey @Switchboard_Sim_Bot what time is it' }), context);
    expect(mention.kind).toBe('message');
    if (mention.kind === 'message') {
      expect(mention.message.address.userScope).toBe('42');
      expect(mention.message.replyTarget).toEqual({ chatId: -100, replyToMessageId: 10, userMessageId: 10 });
    }
    const reply = parseTelegramUpdate(update({ ...group, text: 'and you?', reply_to_message: { message_id: 9, from: { id: 1000001, is_bot: true } } }), context);
    expect(reply.kind).toBe('message');
    expect(parseTelegramUpdate(update({ ...group, text: '/status' }), context).kind).toBe('message');
  });

  it('ignores a command addressed to another bot, in groups and in private, so /stop@other_bot stops nothing here', () => {
    const group = { chat: { id: -100, type: 'supergroup' } };
    for (const text of ['/stop@other_bot', '/STOP@Other_Bot', '/busy@other_bot queue']) {
      expect(parseTelegramUpdate(update({ ...group, text }), context), text).toEqual({ kind: 'ignored', reason: 'command_for_another_bot' });
    }
    // Even as a reply to one of this bot's messages: the command still names the other bot.
    const reply = { message_id: 9, from: { id: 1000001, is_bot: true } };
    expect(parseTelegramUpdate(update({ ...group, text: '/stop@other_bot', reply_to_message: reply }), context).kind).toBe('ignored');
    expect(parseTelegramUpdate(update({ text: '/stop@other_bot' }), context).kind).toBe('ignored');
    // Addressed to this bot (any case), or to no bot: ours.
    const own = parseTelegramUpdate(update({ ...group, text: '/stop@Switchboard_Sim_Bot' }), context);
    expect(own.kind === 'message' && own.message.text).toBe('/stop@Switchboard_Sim_Bot');
    expect(parseTelegramUpdate(update({ ...group, text: '/stop' }), context).kind).toBe('message');
    // Without the username (getMe failed at start) it cannot be told apart: handled as before.
    expect(parseTelegramUpdate(update({ ...group, text: '/stop@other_bot' }), { botId: '1000001' }).kind).toBe('message');
  });

  it('keeps forum topics apart by message_thread_id', () => {
    const result = parseTelegramUpdate(update({ chat: { id: -5, type: 'supergroup' }, text: '/help', message_thread_id: 77, is_topic_message: true }), context);
    expect(result.kind === 'message' && result.message.address.threadId).toBe('77');
    expect(result.kind === 'message' && result.message.replyTarget).toEqual({ chatId: -5, messageThreadId: 77, replyToMessageId: 10, userMessageId: 10 });
  });

  it('ignores bots, edits and messages without text', () => {
    expect(parseTelegramUpdate(update({ text: 'hi', from: { id: 5, is_bot: true } }), context)).toEqual({ kind: 'ignored', reason: 'bot_author' });
    expect(parseTelegramUpdate({ update_id: 1, edited_message: update({ text: 'x' }).message }, context)).toEqual({ kind: 'ignored', reason: 'unsupported_update' });
    expect(parseTelegramUpdate(update({ photo: [] }), context)).toEqual({ kind: 'ignored', reason: 'no_text' });
  });

  it('ignores a chat type it does not know, whatever the message holds, instead of refusing the update', () => {
    for (const message of [{ text: 'hello' }, { text: '/stop' }, { photo: [] }]) {
      expect(parseTelegramUpdate(update({ ...message, chat: { id: 42, type: 'weird' } }), context)).toEqual({ kind: 'ignored', reason: 'unknown_chat_type' });
    }
    expect(() => parseTelegramUpdate(update({ text: 'hi', chat: { id: 42, type: 7 } }), context)).toThrow(PlatformError);
  });

  it('rejects something that is not an Update with INVALID_PAYLOAD', () => {
    for (const body of [null, 'text', { message: {} }, { update_id: -1 }, { update_id: 1, message: { chat: {} } }]) {
      expect(() => parseTelegramUpdate(body, context)).toThrow(PlatformError);
    }
  });
});

describe('readTelegramBotId', () => {
  it('reads the numeric id before the colon', () => {
    expect(readTelegramBotId('123456:ABC-def')).toBe('123456');
    expect(() => readTelegramBotId('abc:def')).toThrow(PlatformError);
  });

  it('takes a photo (its largest size), a document and a voice message as references, the caption as the text', () => {
    const photo = [{ file_id: 'small', file_unique_id: 's', width: 90, height: 90, file_size: 10 }, { file_id: 'large', file_unique_id: 'l', width: 800, height: 600, file_size: 900 }];
    const withPhoto = parseTelegramUpdate(update({ photo, caption: 'look' }), context);
    expect(withPhoto.kind === 'message' && withPhoto.message).toMatchObject({ text: 'look', attachments: [{ kind: 'image', ref: 'large', mime: 'image/jpeg', name: 'photo.jpg', size: 900 }] });
    const doc = parseTelegramUpdate(update({ document: { file_id: 'd1', file_unique_id: 'd', file_name: 'a.md', mime_type: 'text/markdown', file_size: 5 } }), context);
    expect(doc.kind === 'message' && doc.message).toMatchObject({ text: '', attachments: [{ kind: 'document', ref: 'd1', mime: 'text/markdown', name: 'a.md', size: 5 }] });
    const voice = parseTelegramUpdate(update({ voice: { file_id: 'v1', file_unique_id: 'v', duration: 2 } }), context);
    expect(voice.kind === 'message' && voice.message.attachments).toEqual([{ kind: 'audio', ref: 'v1', mime: 'audio/ogg', name: 'voice.ogg', size: null }]);
    // A sticker or a location carries neither text nor a file we read.
    expect(parseTelegramUpdate(update({ sticker: { file_id: 's' } }), context)).toEqual({ kind: 'ignored', reason: 'no_text' });
  });

  it('drops a file field of an unexpected shape instead of refusing the update', () => {
    const result = parseTelegramUpdate(update({ text: 'hi', document: { file_id: 5 } }), context);
    expect(result.kind === 'message' && result.message.attachments).toBeUndefined();
    expect(parseTelegramUpdate(update({ photo: 'nope' }), context)).toEqual({ kind: 'ignored', reason: 'no_text' });
  });
});
