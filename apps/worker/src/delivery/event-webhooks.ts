import { createHmac } from 'node:crypto';
import { loadDueDeliveries, markDeliveryFailed, markDeliverySent, tryLockEventDelivery, type Database, type EventDeliveryLock } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';

export const signatureVersion = 'v0';

/** `v0=` + hex HMAC-SHA256 over `v0:{timestamp}:{body}`, Slack's scheme, so receivers can reuse their verifier. */
export function signEventBody(secret: string, timestamp: number, body: string): string {
  return `${signatureVersion}=${createHmac('sha256', secret).update(`${signatureVersion}:${timestamp}:${body}`).digest('hex')}`;
}

const maxAttempts = 12;
const batch = 50;

/**
 * Delivers recorded lifecycle events to the configured webhook URLs
 * (docs/restarts.md, "Lifecycle events"): in order per conversation and URL, retried with exponential backoff,
 * given up after `maxAttempts`. One worker delivers at a time: it holds the
 * event delivery lock (`tryLockEventDelivery`), so if it dies another takes
 * over at its next tick.
 */
export function startEventWebhooks(deps: { db: Database; secret: string; log: Logger; intervalMs?: number }): { stop(): Promise<void> } {
  let lock: EventDeliveryLock | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const holdLock = async (): Promise<boolean> => {
    lock ??= await tryLockEventDelivery(deps.db);
    return lock !== undefined;
  };

  const tick = async () => {
    if (!(await holdLock())) return;
    const due = await loadDueDeliveries(deps.db, batch);
    await Promise.all(
      due.map(async (delivery) => {
        const body = JSON.stringify({ id: delivery.event.id, ...delivery.event.payload });
        const timestamp = Math.floor(Date.now() / 1000);
        try {
          const response = await fetch(delivery.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-switchboard-request-timestamp': String(timestamp),
              'x-switchboard-signature': signEventBody(deps.secret, timestamp, body),
            },
            body,
            signal: AbortSignal.timeout(10_000),
          });
          if (!response.ok) throw new Error(`answered ${response.status}`);
          await markDeliverySent(deps.db, delivery.id);
        } catch (error) {
          const attempts = delivery.attempts + 1;
          const retryIn = attempts >= maxAttempts ? null : Math.min(500 * 2 ** attempts, 300_000);
          deps.log.warn({ deliveryId: delivery.id, attempts, reason: error instanceof Error ? error.message : String(error) }, 'event webhook delivery failed');
          await markDeliveryFailed(deps.db, delivery.id, error instanceof Error ? error.message : String(error), retryIn);
        }
      }),
    );
  };

  const timer = setInterval(() => {
    if (running || stopped) return;
    running = tick()
      .catch((err: unknown) => deps.log.warn({ err }, 'event webhook tick failed'))
      .finally(() => (running = undefined));
  }, deps.intervalMs ?? 250);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await lock?.release();
    },
  };
}
