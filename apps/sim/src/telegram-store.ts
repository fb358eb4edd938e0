import { randomInt } from 'node:crypto';
import type { EventHub } from './event-hub.ts';
import { ReactionBook } from './reaction-book.ts';
import type {
  CallbackAnswerRecord,
  ChatActionRecord,
  ChatType,
  PendingDelivery,
  SentRecord,
  TelegramChat,
  TelegramFault,
  TelegramMessage,
  TelegramUpdate,
  TelegramUser,
} from './telegram-types.ts';

export interface TelegramOptions {
  botToken?: string;
  webhookUrl?: string;
  webhookSecret?: string;
}

interface ChatState {
  chat: TelegramChat;
  nextMessageId: number;
  messages: Map<number, TelegramMessage>;
}

export interface WebhookState {
  url: string | undefined;
  secret: string | undefined;
  maxConnections: number;
  lastErrorDate?: number;
  lastErrorMessage?: string;
}

const fallbackBotId = 1000001;

/**
 * Everything the emulated Telegram remembers. Counters (update_id, message_id)
 * survive `reset()`: a gateway dedupes on them across test cases, and a
 * number reused after a reset would look like a replay.
 */
export class TelegramStore {
  readonly options: TelegramOptions;
  webhook: WebhookState;
  /** Updates for getUpdates, oldest first, until confirmed by a larger offset. */
  queue: TelegramUpdate[] = [];
  /** Webhook updates that got no 2xx, by update_id order. */
  undelivered: PendingDelivery[] = [];
  sent: SentRecord[] = [];
  actions: ChatActionRecord[] = [];
  faults: TelegramFault[] = [];
  /** answerCallbackQuery calls, in order. */
  callbackAnswers: CallbackAnswerRecord[] = [];
  /** The bot's reactions now, by `chatId:messageId` (setMessageReaction replaces the set). */
  readonly reactions = new ReactionBook();
  /** Bot API calls by method name as called (sendMessage, setMessageReaction, …), for tests that count platform calls per turn. */
  readonly calls = new Map<string, number>();
  /** The long-poll currently entitled to answer getUpdates; a newer call ends it with 409. */
  activePoll: AbortController | undefined;

  private readonly chats = new Map<string, ChatState>();
  private readonly sentByChat = new Map<string, SentRecord[]>();
  private nextUpdateId = 100_000_000 + randomInt(0, 800_000_000);
  private nextCallbackQueryId = randomInt(1, 1_000_000_000);
  private readonly openCallbackQueries = new Set<string>();

  constructor(
    options: TelegramOptions,
    private readonly hub: EventHub,
  ) {
    this.options = options;
    this.webhook = this.initialWebhook();
  }

  /** The bot's own User object; its id is the token's numeric prefix, as on Telegram. */
  botUser(requestToken?: string): TelegramUser {
    const token = this.options.botToken ?? requestToken ?? '';
    const prefix = /^(\d+):/.exec(token)?.[1];
    return {
      id: prefix ? Number(prefix) : fallbackBotId,
      is_bot: true,
      first_name: 'Switchboard Sim',
      username: 'switchboard_sim_bot',
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
    };
  }

  takeUpdateId(requested?: number): number {
    if (requested === undefined) return this.nextUpdateId++;
    this.nextUpdateId = Math.max(this.nextUpdateId, requested + 1);
    return requested;
  }

  /** A callback query id, open until answered once. */
  takeCallbackQueryId(): string {
    const id = String(this.nextCallbackQueryId++);
    this.openCallbackQueries.add(id);
    return id;
  }

  hasCallbackQuery(id: string): boolean {
    return this.openCallbackQueries.has(id);
  }

  recordCallbackAnswer(answer: CallbackAnswerRecord): void {
    this.openCallbackQueries.delete(answer.callback_query_id);
    this.callbackAnswers.push(answer);
    this.hub.publish('telegram.callback_answer', answer);
  }

  /** Finds or creates a chat, letting a later, more specific description refine it. */
  touchChat(id: number | string, details: Partial<TelegramChat> = {}): TelegramChat {
    const key = String(id);
    let state = this.chats.get(key);
    if (!state) {
      state = { chat: { ...describeChat(id), ...stripUndefined(details) }, nextMessageId: 1, messages: new Map() };
      this.chats.set(key, state);
    } else {
      Object.assign(state.chat, stripUndefined(details));
    }
    return state.chat;
  }

  /** Message ids increase per chat, shared by what users and the bot post there. */
  takeMessageId(chatId: number | string): number {
    this.touchChat(chatId);
    const state = this.chats.get(String(chatId)) as ChatState;
    return state.nextMessageId++;
  }

  rememberMessage(message: TelegramMessage): void {
    this.touchChat(message.chat.id);
    this.chats.get(String(message.chat.id))?.messages.set(message.message_id, message);
  }

  findMessage(chatId: number | string, messageId: number): TelegramMessage | undefined {
    return this.chats.get(String(chatId))?.messages.get(messageId);
  }

  recordSent(record: SentRecord): void {
    this.sent.push(record);
    const key = String(record.chat_id);
    const list = this.sentByChat.get(key) ?? [];
    list.push(record);
    this.sentByChat.set(key, list);
    this.hub.publish('telegram.sent', record);
  }

  findSent(chatId: number | string, messageId: number): SentRecord | undefined {
    return this.sentByChat.get(String(chatId))?.find((record) => record.message_id === messageId);
  }

  sentTo(chatId: number | string | undefined): SentRecord[] {
    if (chatId === undefined) return this.sent;
    return this.sentByChat.get(String(chatId)) ?? [];
  }

  recordEdit(record: SentRecord): void {
    this.hub.publish('telegram.edited', record);
  }

  /** setMessageReaction: the bot's reactions on a message become `emoji` (empty: none). */
  setReactions(chatId: number | string, messageId: number, emoji: string[]): void {
    this.reactions.replace(`${String(chatId)}:${messageId}`, emoji);
    this.hub.publish('telegram.reaction', { chat_id: chatId, message_id: messageId, emoji });
  }

  recordAction(action: ChatActionRecord): void {
    this.actions.push(action);
    this.hub.publish('telegram.action', action);
  }

  /** Consumes one use of the first fault armed for `method` (or for every method, '*'). */
  takeFault(method: string): TelegramFault | undefined {
    const name = method.toLowerCase();
    const index = this.faults.findIndex((fault) => fault.method === name || fault.method === '*');
    if (index < 0) return undefined;
    const fault = this.faults[index] as TelegramFault;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults.splice(index, 1);
    return fault;
  }

  enqueue(update: TelegramUpdate): void {
    this.queue.push(update);
    this.queue.sort((a, b) => a.update_id - b.update_id);
    this.hub.publish('telegram.update', { update, queued: true });
  }

  keepUndelivered(entry: PendingDelivery): void {
    if (this.undelivered.some((pending) => pending.update.update_id === entry.update.update_id)) return;
    this.undelivered.push(entry);
    this.undelivered.sort((a, b) => a.update.update_id - b.update.update_id);
  }

  dropUndelivered(updateId: number): void {
    this.undelivered = this.undelivered.filter((pending) => pending.update.update_id !== updateId);
  }

  /** Applies getUpdates' offset rule: ids below a positive offset are confirmed and forgotten. */
  confirmUpTo(offset: number | undefined): void {
    if (offset === undefined || offset === 0) return;
    if (offset < 0) this.queue = this.queue.slice(offset);
    else this.queue = this.queue.filter((update) => update.update_id >= offset);
  }

  /** setWebhook: pending getUpdates updates now wait for the webhook (sent by /control/telegram/redeliver). */
  setWebhook(url: string, secret: string | undefined, maxConnections: number, dropPending: boolean): void {
    this.webhook = { url, secret, maxConnections };
    if (dropPending) return this.dropPending();
    for (const update of this.queue) this.keepUndelivered({ update, bytes: JSON.stringify(update), secretHeader: secret });
    this.queue = [];
  }

  /** deleteWebhook: undelivered webhook updates become available to getUpdates. */
  deleteWebhook(dropPending: boolean): void {
    this.webhook = { url: undefined, secret: undefined, maxConnections: 40 };
    if (dropPending) return this.dropPending();
    for (const pending of this.undelivered) this.queue.push(pending.update);
    this.queue.sort((a, b) => a.update_id - b.update_id);
    this.undelivered = [];
  }

  noteWebhookError(message: string): void {
    this.webhook.lastErrorDate = Math.floor(Date.now() / 1000);
    this.webhook.lastErrorMessage = message;
  }

  reset(): void {
    this.calls.clear();
    this.webhook = this.initialWebhook();
    this.queue = [];
    this.undelivered = [];
    this.sent = [];
    this.actions = [];
    this.faults = [];
    this.callbackAnswers = [];
    this.reactions.clear();
    this.openCallbackQueries.clear();
    this.sentByChat.clear();
    for (const state of this.chats.values()) state.messages.clear();
  }

  private dropPending(): void {
    this.queue = [];
    this.undelivered = [];
  }

  private initialWebhook(): WebhookState {
    return { url: this.options.webhookUrl, secret: this.options.webhookSecret, maxConnections: 40 };
  }
}

// Telegram's id conventions: users are positive, basic groups negative,
// supergroups and channels -100 followed by ten digits; a sim chat nobody
// described follows them.
function describeChat(id: number | string): TelegramChat {
  if (typeof id === 'string') return { id, type: 'channel', title: id.replace(/^@/, ''), username: id.replace(/^@/, '') };
  const type: ChatType = id > 0 ? 'private' : id <= -1_000_000_000_000 ? 'supergroup' : 'group';
  return type === 'private' ? { id, type, first_name: 'Sim User' } : { id, type, title: `Sim ${type} ${id}` };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
