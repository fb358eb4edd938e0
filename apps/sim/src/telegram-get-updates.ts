import { waitUntil } from './abortable.ts';
import { simEventName, type EventHub } from './event-hub.ts';
import type { MethodContext, MethodOutcome } from './telegram-method-types.ts';
import { readOptionalInt } from './telegram-params.ts';
import type { TelegramStore } from './telegram-store.ts';
import { TelegramApiError, badRequest, type TelegramUpdate } from './telegram-types.ts';

/** The sim caps long polls so a forgotten client never pins a test for minutes. */
export const maxLongPollSeconds = 10;

const conflictReason = 'conflict';

/**
 * getUpdates as the Bot API documents it: confirm below `offset`, answer at
 * most `limit`, long-poll up to `timeout` seconds, refuse while a webhook is
 * set, and let a newer call end an older one with 409 as Telegram does.
 */
export function createGetUpdates(hub: EventHub) {
  return async function getUpdates({ store, params, signal }: MethodContext): Promise<MethodOutcome> {
    assertNoWebhook(store);
    const offset = readOptionalInt(params, 'offset');
    const limit = readOptionalInt(params, 'limit') ?? 100;
    if (limit < 1 || limit > 100) throw badRequest('limit must be between 1 and 100');
    const timeoutSeconds = Math.max(0, Math.min(readOptionalInt(params, 'timeout') ?? 0, maxLongPollSeconds));

    store.activePoll?.abort(conflictReason);
    const poll = new AbortController();
    store.activePoll = poll;
    const stop = AbortSignal.any([signal, poll.signal]);
    hub.publish('telegram.poll', { offset: offset ?? null, limit, timeout: timeoutSeconds });

    try {
      store.confirmUpTo(offset);
      const from = offset !== undefined && offset > 0 ? offset : -Infinity;
      const pick = (): TelegramUpdate[] | undefined => {
        if (store.webhook.url !== undefined) return [];
        const ready = store.queue.filter((update) => update.update_id >= from).slice(0, limit);
        return ready.length > 0 ? ready : undefined;
      };
      const updates = (await waitUntil(pick, { emitter: hub, eventName: simEventName, timeoutMs: timeoutSeconds * 1000, signal: stop })) ?? [];
      if (poll.signal.aborted && poll.signal.reason === conflictReason) {
        throw new TelegramApiError(409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running');
      }
      return { result: updates };
    } finally {
      if (store.activePoll === poll) store.activePoll = undefined;
    }
  };
}

function assertNoWebhook(store: TelegramStore): void {
  if (store.webhook.url !== undefined) {
    throw new TelegramApiError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
  }
}
