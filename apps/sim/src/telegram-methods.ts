import { answerCallbackQuery, checkInlineKeyboard } from './telegram-buttons.ts';
import { MarkupError, isParseMode, renderPlainText, type ParseMode } from './telegram-markup.ts';
import { preciseNow } from './precise-clock.ts';
import { readBoolean, readChatId, readOptionalInt, readOptionalObject, readOptionalString, type Params } from './telegram-params.ts';
import type { MethodContext, MethodHandler, MethodOutcome } from './telegram-method-types.ts';
import { badRequest, type SentRecord, type TelegramMessage } from './telegram-types.ts';

const maxTextLength = 4096;
const chatActions = new Set([
  'typing',
  'upload_photo',
  'record_video',
  'upload_video',
  'record_voice',
  'upload_voice',
  'upload_document',
  'choose_sticker',
  'find_location',
  'record_video_note',
  'upload_video_note',
]);
const secretTokenPattern = /^[A-Za-z0-9_-]{1,256}$/;

const nowSeconds = () => Math.floor(Date.now() / 1000);

function getMe({ store, token }: MethodContext): MethodOutcome {
  return { result: store.botUser(token) };
}

/**
 * Visible text for `text` under `parse_mode`, enforcing the Bot API's limits:
 * 1–4096 characters after entity parsing (counted in UTF-16 units, which is
 * what entity offsets use too).
 */
function checkText(params: Params): { raw: string; plain: string; parseMode: ParseMode | undefined } {
  const raw = readOptionalString(params, 'text') ?? '';
  const modeParam = readOptionalString(params, 'parse_mode');
  const parseMode = modeParam === undefined || modeParam === '' ? undefined : modeParam;
  if (parseMode !== undefined && !isParseMode(parseMode)) throw badRequest(`unsupported parse_mode`);
  let plain: string;
  try {
    plain = renderPlainText(raw, parseMode);
  } catch (error) {
    if (error instanceof MarkupError) throw badRequest(error.message);
    throw error;
  }
  if (plain.trim() === '') throw badRequest('message text is empty');
  if (plain.length > maxTextLength) throw badRequest('message is too long');
  return { raw, plain, parseMode };
}

function sendMessage({ store, params, token }: MethodContext): MethodOutcome {
  const chatId = readChatId(params);
  const { raw, plain, parseMode } = checkText(params);
  const threadId = readOptionalInt(params, 'message_thread_id');
  const replyParameters = readOptionalObject(params, 'reply_parameters');
  const replyToId = readOptionalInt(replyParameters ?? {}, 'message_id') ?? readOptionalInt(params, 'reply_to_message_id');
  const allowWithoutReply = readBoolean(replyParameters ?? {}, 'allow_sending_without_reply') || readBoolean(params, 'allow_sending_without_reply');

  const chat = store.touchChat(chatId);
  const replyTarget = replyToId === undefined ? undefined : store.findMessage(chatId, replyToId);
  if (replyToId !== undefined && !replyTarget && !allowWithoutReply) throw badRequest('message to be replied not found');

  const date = nowSeconds();
  const message: TelegramMessage = {
    message_id: store.takeMessageId(chatId),
    from: store.botUser(token),
    chat: { ...chat },
    date,
    ...(threadId !== undefined ? { message_thread_id: threadId, is_topic_message: true } : {}),
    ...(replyTarget ? { reply_to_message: withoutNestedReply(replyTarget) } : {}),
    text: plain,
  };
  const markup = readOptionalObject(params, 'reply_markup');
  checkInlineKeyboard(markup);
  if (markup) message.reply_markup = markup;
  store.rememberMessage(message);

  const record: SentRecord = {
    message_id: message.message_id,
    chat_id: chatId,
    text: plain,
    ...(parseMode ? { rawText: raw, parse_mode: parseMode } : {}),
    ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
    ...(replyTarget ? { reply_to_message_id: replyTarget.message_id } : {}),
    ...(markup ? { reply_markup: markup } : {}),
    date,
    sentAt: preciseNow(),
  };
  store.recordSent(record);
  return { result: message };
}

// Telegram includes the replied-to message one level deep only.
function withoutNestedReply(message: TelegramMessage): TelegramMessage {
  const { reply_to_message: _nested, ...rest } = message;
  return rest;
}

function editMessageText({ store, params, token }: MethodContext): MethodOutcome {
  if (params.inline_message_id !== undefined) throw badRequest('MESSAGE_ID_INVALID');
  const chatId = readChatId(params);
  const messageId = readOptionalInt(params, 'message_id');
  if (messageId === undefined) throw badRequest('message identifier is not specified');
  const { raw, plain, parseMode } = checkText(params);

  const message = store.findMessage(chatId, messageId);
  if (!message) throw badRequest('message to edit not found');
  if (message.from?.id !== store.botUser(token).id) throw badRequest("message can't be edited");
  // An edit without reply_markup removes the inline keyboard, as on Telegram.
  const markup = readOptionalObject(params, 'reply_markup');
  checkInlineKeyboard(markup);
  if (message.text === plain && JSON.stringify(message.reply_markup) === JSON.stringify(markup)) {
    throw badRequest(
      'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
    );
  }
  message.text = plain;
  message.edit_date = nowSeconds();
  if (markup) message.reply_markup = markup;
  else delete message.reply_markup;

  const record = store.findSent(chatId, messageId);
  if (record) {
    const editedAt = Date.now();
    record.text = plain;
    if (parseMode) record.rawText = raw;
    else delete record.rawText;
    record.editedAt = editedAt;
    if (markup) record.reply_markup = markup;
    else delete record.reply_markup;
    record.edits = [...(record.edits ?? []), { text: plain, ...(parseMode ? { rawText: raw } : {}), editedAt }];
    store.recordEdit(record);
  }
  return { result: { ...message } };
}

function sendChatAction({ store, params }: MethodContext): MethodOutcome {
  const chatId = readChatId(params);
  const action = readOptionalString(params, 'action');
  if (action === undefined || action === '') throw badRequest('action is empty');
  if (!chatActions.has(action)) throw badRequest('wrong parameter action in request');
  const threadId = readOptionalInt(params, 'message_thread_id');
  store.touchChat(chatId);
  store.recordAction({ chat_id: chatId, action, ...(threadId !== undefined ? { message_thread_id: threadId } : {}), at: Date.now() });
  return { result: true };
}

/** A subset of the emoji Telegram allows as a bot's reaction (ReactionTypeEmoji); ✅ ❌ ⏳ are not among them. */
const allowedReactionEmoji = new Set(['👍', '👎', '❤', '🔥', '👏', '🤔', '🎉', '🙏', '👌', '⚡', '🏆', '💯', '👀', '✍', '🤝', '🫡', '😴', '🥱', '🤷']);

function readReactionParam(raw: unknown): unknown {
  if (raw === undefined) return [];
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw badRequest("can't parse reaction types JSON object");
  }
}

function setMessageReaction({ store, params }: MethodContext): MethodOutcome {
  const chatId = readChatId(params);
  const messageId = readOptionalInt(params, 'message_id');
  if (messageId === undefined) throw badRequest('message identifier is not specified');
  if (!store.findMessage(chatId, messageId)) throw badRequest('message to react not found');
  const raw = readReactionParam(params.reaction);
  if (!Array.isArray(raw)) throw badRequest("can't parse reaction types JSON object");
  const emoji = raw.map((entry: unknown) => (entry !== null && typeof entry === 'object' && 'emoji' in entry ? String(entry.emoji) : ''));
  if (emoji.some((e) => !allowedReactionEmoji.has(e))) throw badRequest('REACTION_INVALID');
  // Bots without Premium may set one reaction per message.
  if (emoji.length > 1) throw badRequest('REACTIONS_TOO_MANY');
  store.setReactions(chatId, messageId, emoji);
  return { result: true };
}

function setWebhook({ store, params }: MethodContext): MethodOutcome {
  const url = readOptionalString(params, 'url');
  if (url === undefined) throw badRequest('parameter "url" is required');
  const dropPending = readBoolean(params, 'drop_pending_updates');
  // An empty url is how the Bot API removes a webhook through setWebhook.
  if (url === '') {
    store.deleteWebhook(dropPending);
    return { result: true, description: 'Webhook was deleted' };
  }
  // The sim accepts http:// as well: its gateways listen on loopback without TLS.
  if (!/^https?:\/\/[^\s/]+/.test(url)) throw badRequest('bad webhook: Failed to resolve host: Name or service not known');
  const secret = readOptionalString(params, 'secret_token');
  if (secret !== undefined && secret !== '' && !secretTokenPattern.test(secret)) {
    throw badRequest('bad webhook: secret token contains unallowed characters');
  }
  const maxConnections = readOptionalInt(params, 'max_connections') ?? 40;
  if (maxConnections < 1 || maxConnections > 100) throw badRequest('bad webhook: max_connections must be between 1 and 100');
  const alreadySet = store.webhook.url === url && store.webhook.secret === (secret || undefined);
  store.setWebhook(url, secret || undefined, maxConnections, dropPending);
  return { result: true, description: alreadySet ? 'Webhook is already set' : 'Webhook was set' };
}

function deleteWebhook({ store, params }: MethodContext): MethodOutcome {
  const wasSet = store.webhook.url !== undefined;
  store.deleteWebhook(readBoolean(params, 'drop_pending_updates'));
  return { result: true, description: wasSet ? 'Webhook was deleted' : 'Webhook is already deleted' };
}

function getWebhookInfo({ store }: MethodContext): MethodOutcome {
  const { webhook } = store;
  return {
    result: {
      url: webhook.url ?? '',
      has_custom_certificate: false,
      pending_update_count: store.queue.length + store.undelivered.length,
      ...(webhook.url ? { max_connections: webhook.maxConnections, ip_address: '127.0.0.1' } : {}),
      ...(webhook.lastErrorDate !== undefined ? { last_error_date: webhook.lastErrorDate, last_error_message: webhook.lastErrorMessage } : {}),
    },
  };
}

/** Bot API methods by lower-cased name: the Bot API treats method names case-insensitively. */
export const basicMethods: ReadonlyMap<string, MethodHandler> = new Map<string, MethodHandler>([
  ['getme', getMe],
  ['sendmessage', sendMessage],
  ['editmessagetext', editMessageText],
  ['sendchataction', sendChatAction],
  ['setwebhook', setWebhook],
  ['deletewebhook', deleteWebhook],
  ['getwebhookinfo', getWebhookInfo],
  ['answercallbackquery', answerCallbackQuery],
  ['setmessagereaction', setMessageReaction],
]);
