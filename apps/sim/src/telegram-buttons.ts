import { z } from 'zod';
import { readOptionalString, type Params } from './telegram-params.ts';
import type { MethodContext, MethodOutcome } from './telegram-method-types.ts';
import type { TelegramStore } from './telegram-store.ts';
import { badRequest, type TelegramUpdate, type TelegramUser } from './telegram-types.ts';

/** What a test says a user pressed: a button under one of the bot's messages, by its text or its callback_data. */
export const pressSchema = z
  .object({
    chat_id: z.number().int(),
    message_id: z.number().int().positive(),
    from: z.object({ id: z.number().int().positive(), first_name: z.string().min(1).optional(), username: z.string().min(1).optional() }).strict(),
    /** The button's text; or `data`, its callback_data. */
    text: z.string().min(1).optional(),
    data: z.string().min(1).optional(),
    secret_token: z.string().nullable().optional(),
  })
  .strict()
  .refine((input) => input.text !== undefined || input.data !== undefined, { message: 'text or data is required' });

export type PressInput = z.infer<typeof pressSchema>;

interface InlineButton {
  text: string;
  callback_data?: string;
}

/** The inline keyboard's buttons of a message, in order (Bot API InlineKeyboardMarkup). */
export function readInlineButtons(markup: unknown): InlineButton[] {
  const rows = (markup as { inline_keyboard?: unknown } | undefined)?.inline_keyboard;
  if (!Array.isArray(rows)) return [];
  return rows.flatMap((row) => (Array.isArray(row) ? (row as InlineButton[]) : []));
}

/** Checks an inline keyboard as the Bot API does: callback_data 1-64 bytes. */
export function checkInlineKeyboard(markup: Record<string, unknown> | undefined): void {
  if (!markup || !('inline_keyboard' in markup)) return;
  for (const button of readInlineButtons(markup)) {
    if (typeof button.text !== 'string' || button.text === '') throw badRequest('inline keyboard button text must be non-empty');
    if (button.callback_data !== undefined && (Buffer.byteLength(button.callback_data) < 1 || Buffer.byteLength(button.callback_data) > 64)) {
      throw badRequest('BUTTON_DATA_INVALID');
    }
  }
}

/**
 * The `callback_query` update Telegram sends when `input.from` presses a
 * button under the bot's message; the query id is remembered so that
 * answerCallbackQuery can be checked and recorded.
 */
export function buildCallbackUpdate(store: TelegramStore, input: PressInput): TelegramUpdate {
  const message = store.findMessage(input.chat_id, input.message_id);
  if (!message) throw badRequest('message not found');
  const button = readInlineButtons(message.reply_markup).find((b) => (input.data !== undefined ? b.callback_data === input.data : b.text === input.text));
  if (!button?.callback_data) throw badRequest('the message has no such callback button');
  const from: TelegramUser = { id: input.from.id, is_bot: false, first_name: input.from.first_name ?? 'Sim User', ...(input.from.username ? { username: input.from.username } : {}) };
  const id = store.takeCallbackQueryId();
  return {
    update_id: store.takeUpdateId(),
    callback_query: { id, from, message: { ...message }, chat_instance: `ci${String(message.chat.id)}`, data: button.callback_data },
  };
}

/** answerCallbackQuery: a known query id, answered once (Bot API: a second answer is refused), `text` 0-200 characters. */
export function answerCallbackQuery({ store, params }: MethodContext): MethodOutcome {
  const id = readOptionalString(params as Params, 'callback_query_id');
  if (!id || !store.hasCallbackQuery(id)) throw badRequest('query is too old and response timeout expired or query ID is invalid');
  const text = readOptionalString(params, 'text');
  if (text !== undefined && text.length > 200) throw badRequest('MESSAGE_TOO_LONG');
  store.recordCallbackAnswer({ callback_query_id: id, ...(text !== undefined ? { text } : {}), show_alert: params.show_alert === true || params.show_alert === 'true', at: Date.now() });
  return { result: true };
}
