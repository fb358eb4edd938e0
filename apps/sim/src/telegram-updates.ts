import { z } from 'zod';
import { requireFile, type MediaStore } from './media-files.ts';
import type { TelegramStore } from './telegram-store.ts';
import type { MessageEntity, TelegramMessage, TelegramUpdate, TelegramUser } from './telegram-types.ts';

/** What a test or the load tester says a user typed; the sim turns it into a real Update. */
export const inboundMessageSchema = z
  .object({
    chat: z
      .object({
        id: z.number().int(),
        type: z.enum(['private', 'group', 'supergroup']).optional(),
        title: z.string().min(1).optional(),
        username: z.string().min(1).optional(),
        is_forum: z.boolean().optional(),
      })
      .strict(),
    from: z
      .object({
        id: z.number().int().positive(),
        first_name: z.string().min(1).optional(),
        last_name: z.string().min(1).optional(),
        username: z.string().min(1).optional(),
        is_bot: z.boolean().optional(),
        language_code: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    text: z.string().min(1, 'must not be empty (Telegram never delivers an empty text message)').optional(),
    /** Files by their sim id (POST /control/media/files), sent as Telegram sends them: photo sizes, document, voice, audio. */
    photo: z.string().min(1).optional(),
    document: z.string().min(1).optional(),
    voice: z.string().min(1).optional(),
    audio: z.string().min(1).optional(),
    caption: z.string().min(1).optional(),
    message_thread_id: z.number().int().positive().optional(),
    reply_to_message_id: z.number().int().positive().optional(),
    update_id: z.number().int().nonnegative().optional(),
    /** Overrides the secret header for this delivery; null sends none. */
    secret_token: z.string().nullable().optional(),
  })
  .strict()
  .refine((input) => input.text !== undefined || input.photo || input.document || input.voice || input.audio, 'give text or a file (photo, document, voice, audio)')
  .refine((input) => input.text === undefined || input.caption === undefined, 'a text message has no caption');

export type InboundMessage = z.infer<typeof inboundMessageSchema>;

// Default author for a chat nobody described: in private chats the user's id
// is the chat's id; a group needs some positive user id.
const defaultGroupUserId = 7_000_001;

/** Builds the Update Telegram would send for `input` and remembers its message for later replies. */
export function buildMessageUpdate(store: TelegramStore, input: InboundMessage, media?: MediaStore): TelegramUpdate {
  const chat = store.touchChat(input.chat.id, {
    type: input.chat.type,
    title: input.chat.title,
    username: input.chat.username,
    is_forum: input.chat.is_forum ?? (input.message_thread_id !== undefined ? true : undefined),
  });
  const from: TelegramUser = {
    id: input.from?.id ?? (input.chat.id > 0 ? input.chat.id : defaultGroupUserId),
    is_bot: input.from?.is_bot ?? false,
    first_name: input.from?.first_name ?? 'Sim User',
    ...(input.from?.last_name ? { last_name: input.from.last_name } : {}),
    ...(input.from?.username ? { username: input.from.username } : {}),
    ...(input.from?.language_code ? { language_code: input.from.language_code } : {}),
  };
  if (chat.type === 'private') store.touchChat(chat.id, { first_name: from.first_name, username: from.username });

  const replyTarget = input.reply_to_message_id === undefined ? undefined : store.findMessage(chat.id, input.reply_to_message_id);
  const date = Math.floor(Date.now() / 1000);
  const entities = input.text !== undefined ? findEntities(input.text) : [];
  const message: TelegramMessage = {
    message_id: store.takeMessageId(chat.id),
    ...(input.message_thread_id !== undefined ? { message_thread_id: input.message_thread_id } : {}),
    from,
    chat: { ...chat },
    date,
    ...(input.message_thread_id !== undefined ? { is_topic_message: true } : {}),
    ...(input.reply_to_message_id !== undefined
      ? { reply_to_message: replyTarget ? stripReply(replyTarget) : { message_id: input.reply_to_message_id, date, chat: { ...chat } } }
      : {}),
    ...(input.text !== undefined ? { text: input.text } : {}),
    ...(entities.length > 0 ? { entities } : {}),
    ...(media ? telegramFileFields(media, input) : {}),
  };
  store.rememberMessage(message);
  return { update_id: store.takeUpdateId(input.update_id), message };
}

/** The file fields of a message as the Bot API sends them (Message: photo, document, voice, audio, caption). */
function telegramFileFields(media: MediaStore, input: InboundMessage): Partial<TelegramMessage> {
  const base = (id: string) => {
    const file = requireFile(media, id);
    return { file, fields: { file_id: file.id, file_unique_id: `u${file.id}`, file_size: file.announcedSize } };
  };
  const fields: Record<string, unknown> = {};
  if (input.photo) {
    const { fields: photo } = base(input.photo);
    // Telegram sends several sizes, smallest first; the sim's thumbnail is the same file.
    fields.photo = [{ ...photo, file_unique_id: `${photo.file_unique_id}s`, width: 90, height: 90 }, { ...photo, width: 800, height: 600 }];
  }
  if (input.document) {
    const { file, fields: document } = base(input.document);
    fields.document = { ...document, file_name: file.name, mime_type: file.mime };
  }
  if (input.voice) {
    const { file, fields: voice } = base(input.voice);
    fields.voice = { ...voice, duration: 3, mime_type: file.mime };
  }
  if (input.audio) {
    const { file, fields: audio } = base(input.audio);
    fields.audio = { ...audio, duration: 3, file_name: file.name, mime_type: file.mime };
  }
  if (input.caption !== undefined) fields.caption = input.caption;
  return fields as Partial<TelegramMessage>;
}

function stripReply(message: TelegramMessage): TelegramMessage {
  const { reply_to_message: _nested, ...rest } = message;
  return rest;
}

/**
 * Entities Telegram computes for plain text that the gateway relies on:
 * `/command` (optionally `@botname`) and `@username` mentions. Offsets and
 * lengths are UTF-16 code units, which is what JS string indices are.
 */
export function findEntities(text: string): MessageEntity[] {
  const entities: MessageEntity[] = [];
  const pattern = /(^|[\s(])(\/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?|@[A-Za-z0-9_]{5,32})(?![A-Za-z0-9_])/g;
  for (const match of text.matchAll(pattern)) {
    const token = match[2] as string;
    const offset = (match.index ?? 0) + (match[1] as string).length;
    entities.push({ type: token.startsWith('/') ? 'bot_command' : 'mention', offset, length: token.length });
  }
  return entities;
}
