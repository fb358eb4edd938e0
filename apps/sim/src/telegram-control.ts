import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { waitUntil } from './abortable.ts';
import { SimError } from './errors.ts';
import { simEventName, type EventHub } from './event-hub.ts';
import { normaliseChatId, readIntQuery, watchClient } from './http-helpers.ts';
import { parseBody } from './parse-body.ts';
import type { MediaStore } from './media-files.ts';
import type { TelegramStore } from './telegram-store.ts';
import { buildCallbackUpdate, pressSchema } from './telegram-buttons.ts';
import { TelegramApiError, type SentRecord, type TelegramUpdate } from './telegram-types.ts';
import { buildMessageUpdate, inboundMessageSchema } from './telegram-updates.ts';
import { deliverUpdate, prepareDelivery, redeliver } from './telegram-webhook.ts';
import { registerMethodFaultRoutes } from './method-faults.ts';

export interface TelegramControlDeps {
  store: TelegramStore;
  media?: MediaStore;
  hub: EventHub;
  shutdown: AbortSignal;
}

const redeliverSchema = z.object({ update_id: z.number().int().nonnegative().optional() }).strict();

const maxWaitMs = 300_000;

type Query = Record<string, unknown>;

/** `/control/telegram/*`: inject user messages, inspect what the bot did, arm faults. */
export async function registerTelegramControl(app: FastifyInstance, deps: TelegramControlDeps): Promise<void> {
  registerUserActionRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  registerTelegramReadingRoutes(app, deps);
  registerMethodFaultRoutes(app, deps.store, { path: '/control/telegram/faults', minRetryAfter: 1, refusesMarkup: true });
}

/** Delivers like Telegram: to the webhook when one is set, else queued for getUpdates. */
async function sendUpdate(deps: TelegramControlDeps, update: TelegramUpdate, secretToken: string | null | undefined) {
  const { store, hub } = deps;
  const url = store.webhook.url;
  if (url === undefined) {
    store.enqueue(update);
    return { update, delivered: false, queued: true };
  }
  hub.publish('telegram.update', { update, queued: false });
  const result = await deliverUpdate(deps, url, prepareDelivery(store, update, secretToken));
  return {
    update,
    delivered: result.status >= 200 && result.status < 300,
    status: result.status,
    body: result.body,
    ackMs: result.ackMs,
    postedAt: result.postedAt,
    ...(result.error ? { error: result.error } : {}),
  };
}

/** What a Telegram user does: send a message, press an inline button (and what the bot answered to the press). */
function registerUserActionRoutes(app: FastifyInstance, deps: TelegramControlDeps): void {
  const { store } = deps;

  app.post('/control/telegram/updates', async (request) => {
    const input = parseBody(inboundMessageSchema, request.body);
    return sendUpdate(deps, buildMessageUpdate(store, input, deps.media), input.secret_token);
  });

  // A user presses an inline button under one of the bot's messages: a callback_query update, delivered like messages.
  app.post('/control/telegram/press', async (request) => {
    const input = parseBody(pressSchema, request.body);
    let update: TelegramUpdate;
    try {
      update = buildCallbackUpdate(store, input);
    } catch (error) {
      if (error instanceof TelegramApiError) throw new SimError('SIM_NO_SUCH_BUTTON', error.description, 404);
      throw error;
    }
    const sent = await sendUpdate(deps, update, input.secret_token);
    const id = update.callback_query?.id;
    return { ...sent, answer: store.callbackAnswers.find((answer) => answer.callback_query_id === id) ?? null };
  });

  app.get('/control/telegram/callback-answers', async () => store.callbackAnswers);
}

/** The webhook as Telegram holds it: its settings, the updates it failed to deliver, and resending them. */
function registerWebhookRoutes(app: FastifyInstance, deps: TelegramControlDeps): void {
  const { store } = deps;

  app.post('/control/telegram/redeliver', async (request) => {
    const { update_id: updateId } = parseBody(redeliverSchema, request.body ?? {});
    const url = store.webhook.url;
    if (url === undefined) throw new SimError('SIM_NO_WEBHOOK', 'no webhook is set; updates wait for getUpdates instead', 409);
    if (updateId !== undefined && !store.undelivered.some((entry) => entry.update.update_id === updateId)) {
      throw new SimError('SIM_UNKNOWN_UPDATE', `update ${updateId} is not in the undelivered list`, 404);
    }
    return redeliver(deps, url, updateId);
  });

  app.get('/control/telegram/undelivered', async () => store.undelivered.map((entry) => entry.update));

  app.get('/control/telegram/webhook', async () => ({
    url: store.webhook.url ?? null,
    secretSet: store.webhook.secret !== undefined,
    queued: store.queue.length,
    undelivered: store.undelivered.length,
  }));
}

/** What the bot did: messages sent (and a long poll for the next ones), chat actions, reactions. */
function registerTelegramReadingRoutes(app: FastifyInstance, deps: TelegramControlDeps): void {
  const { store, hub, shutdown } = deps;

  app.get('/control/telegram/sent', async (request) => selectSent(store, request.query as Query));

  app.get('/control/telegram/wait', async (request, reply) => {
    const query = request.query as Query;
    const count = readIntQuery(query, 'count', { fallback: 1, min: 1 }) as number;
    const timeoutMs = readIntQuery(query, 'timeout_ms', { fallback: 10_000, min: 0, max: maxWaitMs }) as number;
    const { signal } = watchClient(reply, shutdown);
    const chatId = normaliseChatId(query.chat_id);
    const after = readIntQuery(query, 'after_message_id');
    // Called on every recorded event: look at the count before copying anything.
    const check = () => {
      const all = store.sentTo(chatId);
      const ready = after === undefined ? all.length >= count : all.filter((record) => record.message_id > after).length >= count;
      return ready ? selectSent(store, query) : undefined;
    };
    const sent = await waitUntil(check, { emitter: hub, eventName: simEventName, timeoutMs, signal });
    if (sent) return sent;
    return reply.code(408).send({ error: 'timeout', code: 'SIM_WAIT_TIMEOUT', sent: selectSent(store, query) });
  });

  app.get('/control/telegram/actions', async (request) => {
    const chatId = normaliseChatId((request.query as Query).chat_id);
    return chatId === undefined ? store.actions : store.actions.filter((action) => String(action.chat_id) === String(chatId));
  });

  // The bot's reactions on one message now (setMessageReaction), and how many reaction calls arrived in all.
  app.get('/control/telegram/reactions', async (request) => {
    const query = request.query as Query;
    const chatId = normaliseChatId(query.chat_id);
    const messageId = readIntQuery(query, 'message_id');
    const emoji = chatId !== undefined && messageId !== undefined ? store.reactions.on(`${String(chatId)}:${messageId}`) : [];
    return { emoji, calls: store.reactions.calls, all: store.reactions.all() };
  });
}

/** `chat_id` (optional) and `after_message_id` (optional) filters shared by /sent and /wait. */
function selectSent(store: TelegramStore, query: Query): SentRecord[] {
  const chatId = normaliseChatId(query.chat_id);
  const after = readIntQuery(query, 'after_message_id');
  const sent = store.sentTo(chatId);
  return after === undefined ? [...sent] : sent.filter((record) => record.message_id > after);
}
