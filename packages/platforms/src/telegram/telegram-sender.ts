import { Api, GrammyError, HttpError } from 'grammy';
import type { InlineKeyboardMarkup, ReactionTypeEmoji } from 'grammy/types';
import { PlatformError } from '../errors.ts';
import type { ChoiceButton, PlatformSender, SentMessage } from '../types.ts';
import { measureTelegramHtml, renderTelegramHtml } from './render-html.ts';
import { readTelegramReplyTarget } from './reply-target.ts';

export interface TelegramSenderOptions {
  token: string;
  /** Bot API root without trailing slash; the simulator's URL in tests. */
  apiRoot: string;
  messageLimit?: number;
}

export function createTelegramSender(options: TelegramSenderOptions): PlatformSender & { api: Api } {
  const api = new Api(options.token, { apiRoot: options.apiRoot.replace(/\/+$/, '') });
  const messageLimit = Math.min(options.messageLimit ?? 4096, 4096);
  return {
    platform: 'telegram',
    messageLimit,
    // Telegram counts the text once the HTML is parsed away; a list's renumbering can still make it longer than the source.
    fitsOneMessage: (text) => measureTelegramHtml(renderTelegramHtml(text)) <= messageLimit,
    typingIntervalMs: 4000,
    api,
    sendText: (target, text) => sendMessage(api, target, text, {}),
    editText: (target, platformMessageId, text) => editMessage(api, target, Number(platformMessageId), text),
    // With or without a reply part's options: Telegram's post is the same either way (its deduplication is the outbox's row claim).
    sendWithButtons: (target, text, buttons) => sendMessage(api, target, text, { reply_markup: toInlineKeyboard(buttons) }),
    replaceText: (target, platformMessageId, text) => replaceText(api, target, Number(platformMessageId), text),
    setReaction: (target, change) => setReaction(api, target, change),
    sendTyping: (target) => sendTyping(api, target),
  };
}

async function sendMessage(api: Api, target: Record<string, unknown>, text: string, extra: { reply_markup?: InlineKeyboardMarkup }): Promise<SentMessage> {
  const t = readTelegramReplyTarget(target);
  const options = {
    ...extra,
    ...(t.messageThreadId !== undefined ? { message_thread_id: t.messageThreadId } : {}),
    ...(t.replyToMessageId !== undefined ? { reply_parameters: { message_id: t.replyToMessageId, allow_sending_without_reply: true } } : {}),
  };
  try {
    const sent = await api.sendMessage(t.chatId, renderTelegramHtml(text), { ...options, parse_mode: 'HTML' });
    return { platformMessageId: String(sent.message_id) };
  } catch (error) {
    // Telegram rejected the formatting ("can't parse entities", or the markup made it too long): the same words as plain text.
    if (!(error instanceof GrammyError && error.error_code === 400)) throw toPlatformError(error);
  }
  try {
    const sent = await api.sendMessage(t.chatId, text, options);
    return { platformMessageId: String(sent.message_id) };
  } catch (error) {
    throw toPlatformError(error);
  }
}

async function editMessage(api: Api, target: Record<string, unknown>, messageId: number, text: string): Promise<void> {
  const t = readTelegramReplyTarget(target);
  try {
    await api.editMessageText(t.chatId, messageId, renderTelegramHtml(text), { parse_mode: 'HTML' });
    return;
  } catch (error) {
    if (isNotModified(error)) return;
    if (!(error instanceof GrammyError && error.error_code === 400)) throw toPlatformError(error);
  }
  try {
    await api.editMessageText(t.chatId, messageId, text);
  } catch (error) {
    if (!isNotModified(error)) throw toPlatformError(error);
  }
}

async function replaceText(api: Api, target: Record<string, unknown>, messageId: number, text: string): Promise<void> {
  const t = readTelegramReplyTarget(target);
  try {
    // Without reply_markup the inline keyboard goes: the question can no longer be pressed.
    await api.editMessageText(t.chatId, messageId, text);
  } catch (error) {
    throw toPlatformError(error);
  }
}

async function setReaction(api: Api, target: Record<string, unknown>, change: { remove: string | null; add: string | null }): Promise<void> {
  const t = readTelegramReplyTarget(target);
  if (t.userMessageId === undefined) return;
  // setMessageReaction replaces the bot's whole set: the previous emoji goes without a call of its own.
  const reaction = change.add === null ? [] : [{ type: 'emoji' as const, emoji: change.add as ReactionTypeEmoji['emoji'] }];
  try {
    await api.setMessageReaction(t.chatId, t.userMessageId, reaction);
  } catch (error) {
    throw toPlatformError(error);
  }
}

async function sendTyping(api: Api, target: Record<string, unknown>): Promise<void> {
  const t = readTelegramReplyTarget(target);
  try {
    await api.sendChatAction(t.chatId, 'typing', t.messageThreadId !== undefined ? { message_thread_id: t.messageThreadId } : {});
  } catch (error) {
    throw toPlatformError(error);
  }
}

/** Telegram refuses an edit to the text a message already has; for a streamed reply that is success. */
function isNotModified(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && error.description.includes('message is not modified');
}

function toPlatformError(error: unknown): PlatformError {
  if (error instanceof GrammyError) {
    if (error.error_code === 429) {
      const seconds = error.parameters.retry_after ?? 1;
      return new PlatformError('RATE_LIMITED', `telegram ${error.method}: rate limited`, { retryAfterMs: seconds * 1000, cause: error });
    }
    if (error.error_code >= 500) return new PlatformError('UNAVAILABLE', `telegram ${error.method}: ${error.error_code}`, { cause: error });
    return new PlatformError('REJECTED', `telegram ${error.method}: ${error.description}`, { cause: error });
  }
  if (error instanceof HttpError) return new PlatformError('UNAVAILABLE', 'telegram: network error', { cause: error });
  return new PlatformError('UNAVAILABLE', 'telegram: unexpected error', { cause: error });
}

/** Buttons a row: an approval question's three fit one, a `/schedules` list's Cancel buttons wrap. */
const buttonsPerRow = 3;

/** Rows of buttons; each press sends its payload back as callback_data (at most 64 bytes, checked by the caller's encoding). */
function toInlineKeyboard(buttons: readonly ChoiceButton[]): InlineKeyboardMarkup {
  const keys = buttons.map((button) => ({ text: button.label, callback_data: button.payload }));
  const rows = [];
  for (let i = 0; i < keys.length; i += buttonsPerRow) rows.push(keys.slice(i, i + buttonsPerRow));
  return { inline_keyboard: rows };
}

/** Answers a button press (the spinner on the user's button stops); `text` shows as a short notice to that user only. */
export async function answerTelegramCallback(api: Api, callbackQueryId: string, text?: string): Promise<void> {
  try {
    await api.answerCallbackQuery(callbackQueryId, text ? { text } : {});
  } catch (error) {
    throw toPlatformError(error);
  }
}
