import type { RedisClient } from '@switchboard/queue';
import { recordLifecycleEvent, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { publishLifecycleEvent } from '@switchboard/queue';
import type { ActionEvent } from './action-events.ts';

/** Announces one lifecycle event; resolves once it is recorded (when webhooks are configured). */
export type EmitLifecycleEvent = (event: ActionEvent) => Promise<void>;

export interface LifecycleEmitterDeps {
  db: Database;
  redis: RedisClient;
  prefix: string;
  /** EVENT_WEBHOOK_URLS: with any set, each event is recorded for the webhook deliverer first. */
  webhookUrls: readonly string[];
  log: Logger;
}

/**
 * The one way a process emits lifecycle events (docs/restarts.md,
 * "Lifecycle events"), in the gateway and in the workers alike: recorded in
 * `lifecycle_events` (awaited: a restart after this cannot lose it, and
 * events awaited one after the other are recorded, and so delivered, in that
 * order), then published on the live stream, best effort.
 */
export function createLifecycleEmitter(deps: LifecycleEmitterDeps): EmitLifecycleEvent {
  return async (event) => {
    if (deps.webhookUrls.length > 0) {
      await recordLifecycleEvent(deps.db, { conversationId: event.conversationId, type: event.type, payload: { ...event, at: new Date().toISOString() } }, deps.webhookUrls);
    }
    publishLifecycleEvent(deps.redis, deps.prefix, event).catch((err: unknown) => deps.log.debug({ err, type: event.type }, 'lifecycle event not published'));
  };
}

/** Emits `events` one after the other, in the order given. */
export async function emitInOrder(emit: EmitLifecycleEvent, events: readonly ActionEvent[]): Promise<void> {
  for (const event of events) await emit(event);
}
