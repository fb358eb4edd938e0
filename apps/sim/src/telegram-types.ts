import type { MethodFault } from './method-faults.ts';

/**
 * Bot API object shapes the sim produces (Bot API spec, "Available types"),
 * written here from the spec rather than imported from an SDK or an adapter.
 */

export interface TelegramUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
  language_code?: string;
  can_join_groups?: boolean;
  can_read_all_group_messages?: boolean;
  supports_inline_queries?: boolean;
}

export type ChatType = 'private' | 'group' | 'supergroup' | 'channel';

export interface TelegramChat {
  id: number | string;
  type: ChatType;
  title?: string;
  username?: string;
  first_name?: string;
  last_name?: string;
  is_forum?: boolean;
}

export interface MessageEntity {
  type: 'bot_command' | 'mention';
  offset: number;
  length: number;
}

export interface TelegramMessage {
  message_id: number;
  message_thread_id?: number;
  from?: TelegramUser;
  date: number;
  chat: TelegramChat;
  is_topic_message?: boolean;
  reply_to_message?: TelegramMessage;
  edit_date?: number;
  text?: string;
  entities?: MessageEntity[];
  reply_markup?: unknown;
}

export interface TelegramCallbackQuery {
  id: string;
  from: TelegramUser;
  message?: TelegramMessage;
  chat_instance: string;
  data?: string;
}

export interface TelegramUpdate {
  update_id: number;
  message?: TelegramMessage;
  callback_query?: TelegramCallbackQuery;
}

/** An answerCallbackQuery the bot made. */
export interface CallbackAnswerRecord {
  callback_query_id: string;
  text?: string;
  show_alert: boolean;
  at: number;
}

/** What the control API reports for each message the bot sent. */
export interface SentRecord {
  message_id: number;
  chat_id: number | string;
  /** The text as the user sees it: markup parsed away. */
  text: string;
  /** The text exactly as the bot sent it, when a parse_mode was used. */
  rawText?: string;
  message_thread_id?: number;
  reply_to_message_id?: number;
  parse_mode?: string;
  /** The message's buttons (InlineKeyboardMarkup) as sent; removed by an edit without reply_markup. */
  reply_markup?: unknown;
  date: number;
  sentAt: number;
  editedAt?: number;
  edits?: Array<{ text: string; rawText?: string; editedAt: number }>;
}

export interface ChatActionRecord {
  chat_id: number | string;
  action: string;
  message_thread_id?: number;
  at: number;
}

/** An update waiting for a webhook retry: the exact bytes and header Telegram would resend. */
export interface PendingDelivery {
  update: TelegramUpdate;
  bytes: string;
  secretHeader: string | undefined;
}

export type TelegramFault = MethodFault;

/** A Bot API failure, rendered as `{ok:false, error_code, description, parameters?}`. */
export class TelegramApiError extends Error {
  readonly code: string;
  constructor(
    readonly errorCode: number,
    readonly description: string,
    readonly parameters?: { retry_after?: number; migrate_to_chat_id?: number },
  ) {
    super(description);
    this.name = 'TelegramApiError';
    this.code = `TELEGRAM_${errorCode}`;
  }
}

export const badRequest = (detail: string) => new TelegramApiError(400, `Bad Request: ${detail}`);
