import { z } from 'zod';
import { PlatformError } from '../errors.ts';

/** Where a reply goes: what parseTelegramUpdate puts in the reply target. */
export interface TelegramReplyTarget {
  chatId: number | string;
  /** The forum topic; absent outside topics. */
  messageThreadId?: number;
  /** The user's message, answered in groups. */
  replyToMessageId?: number;
  /** The user's message (in every chat), for the bot's status reaction on it. */
  userMessageId?: number;
}

const optionalMessageId = z.number().int().optional().catch(undefined);
// A malformed optional field is dropped rather than refused: the message still reaches the chat.
const telegramReplyTargetSchema = z.object({
  chatId: z.union([z.number().int(), z.string().min(1)]),
  messageThreadId: optionalMessageId,
  replyToMessageId: optionalMessageId,
  userMessageId: optionalMessageId,
});

/** The stored reply target read back (it is jsonb, so only its shape vouches for it); REJECTED without a chat. */
export function readTelegramReplyTarget(target: Record<string, unknown>): TelegramReplyTarget {
  const parsed = telegramReplyTargetSchema.safeParse(target);
  if (!parsed.success) throw new PlatformError('REJECTED', 'telegram: reply target has no chatId');
  const { chatId, messageThreadId, replyToMessageId, userMessageId } = parsed.data;
  return {
    chatId,
    ...(messageThreadId !== undefined ? { messageThreadId } : {}),
    ...(replyToMessageId !== undefined ? { replyToMessageId } : {}),
    ...(userMessageId !== undefined ? { userMessageId } : {}),
  };
}
