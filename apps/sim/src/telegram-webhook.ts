import type { EventHub } from './event-hub.ts';
import { preciseNow } from './precise-clock.ts';
import type { TelegramStore } from './telegram-store.ts';
import type { PendingDelivery, TelegramUpdate } from './telegram-types.ts';
import { describeFetchError, elapsed, parseAnswer } from './outbound-answer.ts';
import { postToGateway } from './outbound-post.ts';

export const secretHeaderName = 'X-Telegram-Bot-Api-Secret-Token';

/** How long the sim waits for a webhook answer before counting it as failed. */
const webhookTimeoutMs = 30_000;

/** What a webhook delivery records into and stops on. */
export interface WebhookDeps {
  store: TelegramStore;
  hub: EventHub;
  shutdown: AbortSignal;
}

export interface DeliveryResult {
  update_id: number;
  /** 0 when no HTTP answer came (refused, reset, timed out). */
  status: number;
  body: unknown;
  ackMs: number;
  /** When the POST started (ms since epoch, the simulator's clock, like a sent message's sentAt). */
  postedAt: number;
  error?: string;
}

/**
 * Freezes what Telegram sends for `update`: the JSON bytes and the secret
 * header, so a redelivery is byte-identical to the first attempt.
 * `secretOverride`: undefined = the webhook's secret, null = no header.
 */
export function prepareDelivery(store: TelegramStore, update: TelegramUpdate, secretOverride: string | null | undefined): PendingDelivery {
  const secretHeader = secretOverride === null ? undefined : (secretOverride ?? store.webhook.secret);
  return { update, bytes: JSON.stringify(update), secretHeader };
}

/**
 * POSTs one update to the webhook as Telegram does. A non-2xx answer or a
 * network error keeps it in the undelivered list (Telegram would retry it);
 * a 2xx removes it.
 */
export async function deliverUpdate(deps: WebhookDeps, url: string, entry: PendingDelivery): Promise<DeliveryResult> {
  const { store, hub } = deps;
  const startedAt = performance.now();
  const postedAt = preciseNow();
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (entry.secretHeader !== undefined) headers[secretHeaderName] = entry.secretHeader;
  let result: DeliveryResult;
  try {
    const answer = await postToGateway({ url, headers, body: entry.bytes }, webhookTimeoutMs, deps.shutdown);
    result = { update_id: entry.update.update_id, status: answer.status, body: parseAnswer(answer.text), ackMs: elapsed(startedAt), postedAt };
  } catch (error) {
    result = { update_id: entry.update.update_id, status: 0, body: null, ackMs: elapsed(startedAt), postedAt, error: describeFetchError(error) };
  }

  if (result.status >= 200 && result.status < 300) {
    store.dropUndelivered(entry.update.update_id);
  } else {
    store.keepUndelivered(entry);
    store.noteWebhookError(result.status === 0 ? (result.error ?? 'Connection failed') : `Wrong response from the webhook: ${result.status}`);
  }
  hub.publish('telegram.delivery', result);
  return result;
}

/** Re-sends undelivered updates oldest first, one at a time, as Telegram keeps per-chat order. */
export async function redeliver(deps: WebhookDeps, url: string, updateId: number | undefined): Promise<DeliveryResult[]> {
  const entries = deps.store.undelivered.filter((entry) => updateId === undefined || entry.update.update_id === updateId);
  const results: DeliveryResult[] = [];
  for (const entry of entries) results.push(await deliverUpdate(deps, url, entry));
  return results;
}
