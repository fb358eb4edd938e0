import { isCommandForAnotherBot, normaliseText, parseScheduleCancelPayload, scheduleCancelText, type InboundAttachment } from '@switchboard/core';
import { z } from 'zod';
import { PlatformError } from '../errors.ts';
import { normaliseInbound } from '../normalise-inbound.ts';
import type { ParseResult } from '../types.ts';

const userSchema = z.object({ id: z.number().int(), is_bot: z.boolean().optional(), username: z.string().optional() }).passthrough();
// Any string: a chat type newer than this parser is acknowledged and ignored, not refused (see parseTelegramUpdate).
const chatSchema = z.object({ id: z.number().int(), type: z.string() }).passthrough();
const knownChatTypes = new Set(['private', 'group', 'supergroup', 'channel']);
// Telegram Bot API: PhotoSize, Document, Voice, Audio. Sizes are optional on the wire.
const fileSchema = z.object({ file_id: z.string().min(1), file_size: z.number().int().nonnegative().optional() }).passthrough();
const namedFileSchema = fileSchema.extend({ file_name: z.string().optional(), mime_type: z.string().optional() });
const messageSchema = z
  .object({
    message_id: z.number().int(),
    date: z.number().int(),
    chat: chatSchema,
    from: userSchema.optional(),
    text: z.string().optional(),
    caption: z.string().optional(),
    // A file field in a shape this parser does not expect is dropped, never a 400 (which Telegram re-delivers for hours).
    photo: z.array(fileSchema).optional().catch(undefined),
    document: namedFileSchema.optional().catch(undefined),
    voice: namedFileSchema.optional().catch(undefined),
    audio: namedFileSchema.optional().catch(undefined),
    message_thread_id: z.number().int().optional(),
    is_topic_message: z.boolean().optional(),
    reply_to_message: z.object({ message_id: z.number().int(), from: userSchema.optional() }).passthrough().optional(),
  })
  .passthrough();
const callbackQuerySchema = z
  .object({
    id: z.string().min(1),
    from: userSchema,
    data: z.string().optional(),
    message: z
      .object({ message_id: z.number().int(), chat: chatSchema, message_thread_id: z.number().int().optional(), is_topic_message: z.boolean().optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();
const updateSchema = z
  .object({ update_id: z.number().int().nonnegative(), message: messageSchema.optional(), callback_query: callbackQuerySchema.optional() })
  .passthrough();

/** The ignore reason of an update from a chat type this parser does not know; callers count it as rejected. */
export const telegramUnknownChatType = 'unknown_chat_type';

export interface TelegramParseContext {
  /** Numeric bot id: the part of the token before ':'. */
  botId: string;
  /**
   * From getMe; without it, group messages count only as commands or replies
   * to the bot, and `/cmd@name` cannot be told apart from a command for us.
   */
  botUsername?: string;
}

/** The bot id is the token's prefix, so the gateway knows its account without a network call. */
export function readTelegramBotId(token: string): string {
  const id = token.split(':', 1)[0];
  if (!id || !/^\d+$/.test(id)) throw new PlatformError('INVALID_PAYLOAD', 'Telegram bot token must start with the numeric bot id');
  return id;
}

/**
 * Telegram Update → normalised inbound message, or the reason it is ignored.
 * Throws PlatformError INVALID_PAYLOAD for something that is not an Update.
 */
export function parseTelegramUpdate(body: unknown, context: TelegramParseContext): ParseResult {
  const parsed = updateSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new PlatformError('INVALID_PAYLOAD', `not a Telegram Update: ${first?.path.join('.') || 'body'} ${first?.message ?? ''}`.trim());
  }
  const { update_id: updateId, message, callback_query: callback } = parsed.data;
  if (callback) {
    // A press of an inline button under the bot's message (an approval question); a game's callback carries no data.
    if (callback.data === undefined) return { kind: 'ignored', reason: 'callback_without_data' };
    const cancelId = parseScheduleCancelPayload(callback.data);
    if (cancelId !== null) return pressAsCommand({ updateId, callback, text: scheduleCancelText(cancelId) }, context);
    return {
      kind: 'button',
      press: { platform: 'telegram', accountId: context.botId, userId: String(callback.from.id), payload: callback.data, answer: { callbackQueryId: callback.id } },
    };
  }
  if (!message) return { kind: 'ignored', reason: 'unsupported_update' };
  // A 4xx makes Telegram re-deliver the update (and hold the ones behind it) for hours; a chat type
  // the Bot API adds later is acknowledged and dropped instead, and counted by the caller (issue 17).
  if (!knownChatTypes.has(message.chat.type)) return { kind: 'ignored', reason: telegramUnknownChatType };
  const text = message.text ?? message.caption ?? '';
  const attachments = attachmentsOf(message);
  if (normaliseText(text).trim() === '' && attachments.length === 0) return { kind: 'ignored', reason: 'no_text' };
  if (!message.from) return { kind: 'ignored', reason: 'no_author' };
  if (message.from.is_bot) return { kind: 'ignored', reason: 'bot_author' };
  if (message.chat.type === 'channel') return { kind: 'ignored', reason: 'channel_post' };

  // Before anything is stored or signalled: `/stop@other_bot` must not stop this bot's turn, nor become its input.
  if (isCommandForAnotherBot(text, context.botUsername)) return { kind: 'ignored', reason: 'command_for_another_bot' };
  const isPrivate = message.chat.type === 'private';
  if (!isPrivate && !isAddressedToBot(message, context)) return { kind: 'ignored', reason: 'not_addressed' };

  const threadId = message.is_topic_message && message.message_thread_id !== undefined ? String(message.message_thread_id) : '';
  return {
    kind: 'message',
    message: normaliseInbound({
      platform: 'telegram',
      eventId: String(updateId),
      userId: String(message.from.id),
      text,
      ...(attachments.length > 0 ? { attachments } : {}),
      address: {
        platform: 'telegram',
        accountId: context.botId,
        chatId: String(message.chat.id),
        threadId,
        userScope: isPrivate ? '' : String(message.from.id),
      },
      replyTarget: {
        chatId: message.chat.id,
        ...(threadId ? { messageThreadId: message.message_thread_id } : {}),
        ...(isPrivate ? {} : { replyToMessageId: message.message_id }),
        userMessageId: message.message_id,
      },
    }),
  };
}

/**
 * A Cancel button under a `/schedules` list (docs/schedules.md, "In chat"):
 * the typed command it stands for, from the presser, in the chat and topic
 * the button was pressed in. So it is admitted, stored, deduplicated (by
 * update_id) and run exactly like the command typed there; in a group it
 * reaches the presser's own conversation, never the list owner's.
 */
function pressAsCommand(press: { updateId: number; callback: z.infer<typeof callbackQuerySchema>; text: string }, context: TelegramParseContext): ParseResult {
  const { updateId, callback, text } = press;
  const pressed = callback.message;
  if (!pressed) return { kind: 'ignored', reason: 'press_without_message' };
  if (!knownChatTypes.has(pressed.chat.type)) return { kind: 'ignored', reason: telegramUnknownChatType };
  if (pressed.chat.type === 'channel') return { kind: 'ignored', reason: 'channel_post' };
  const isPrivate = pressed.chat.type === 'private';
  const threadId = pressed.is_topic_message && pressed.message_thread_id !== undefined ? String(pressed.message_thread_id) : '';
  return {
    kind: 'message',
    message: normaliseInbound({
      platform: 'telegram',
      eventId: String(updateId),
      userId: String(callback.from.id),
      text,
      address: { platform: 'telegram', accountId: context.botId, chatId: String(pressed.chat.id), threadId, userScope: isPrivate ? '' : String(callback.from.id) },
      replyTarget: {
        chatId: pressed.chat.id,
        ...(threadId ? { messageThreadId: pressed.message_thread_id } : {}),
        // In a group the answer quotes the list that was pressed; there is no user message to react to.
        ...(isPrivate ? {} : { replyToMessageId: pressed.message_id }),
      },
      pressAnswer: { callbackQueryId: callback.id },
    }),
  };
}

// Privacy mode delivers commands, mentions and replies in groups; in a group the bot answers only when addressed, so only those.
function isAddressedToBot(message: z.infer<typeof messageSchema>, context: TelegramParseContext): boolean {
  const text = message.text ?? message.caption ?? '';
  if (text.startsWith('/')) return true;
  if (message.reply_to_message?.from && String(message.reply_to_message.from.id) === context.botId) return true;
  if (context.botUsername && text.toLowerCase().includes(`@${context.botUsername.toLowerCase()}`)) return true;
  return false;
}

/**
 * The files of a message as references (the file_id getFile takes). A photo
 * comes in several sizes, smallest first: the largest is the one worth reading.
 */
function attachmentsOf(message: z.infer<typeof messageSchema>): InboundAttachment[] {
  const found: InboundAttachment[] = [];
  const photo = message.photo?.at(-1);
  if (photo) found.push({ kind: 'image', ref: photo.file_id, mime: 'image/jpeg', name: 'photo.jpg', size: photo.file_size ?? null });
  const { document, voice, audio } = message;
  if (document) found.push({ kind: 'document', ref: document.file_id, mime: document.mime_type ?? null, name: document.file_name ?? null, size: document.file_size ?? null });
  if (voice) found.push({ kind: 'audio', ref: voice.file_id, mime: voice.mime_type ?? 'audio/ogg', name: 'voice.ogg', size: voice.file_size ?? null });
  if (audio) found.push({ kind: 'audio', ref: audio.file_id, mime: audio.mime_type ?? null, name: audio.file_name ?? 'audio', size: audio.file_size ?? null });
  return found;
}
