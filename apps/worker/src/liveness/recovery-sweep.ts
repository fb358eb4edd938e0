import { findConversationsWithDueOutbox, findStrandedConversations, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { enqueueWake, type TurnQueue } from '@switchboard/queue';

export interface SweepDeps {
  db: Database;
  queue: TurnQueue;
  log: Logger;
  intervalMs: number;
  /** Runs first on every sweep (restart rules: dead workers, restart-loop suspension). */
  beforeSweep?: () => Promise<void>;
}

/** Input older than this with no turn is treated as stranded (the normal path takes milliseconds). */
const strandedAfterMs = 3000;
const batch = 500;

/**
 * Repairs lost wake-ups (docs/turns.md): a crash between storing and enqueueing,
 * a Redis restart that lost the queue, outbox rows whose retry is due. Every
 * worker sweeps; job ids carry a time bucket so many sweepers add one job per
 * conversation per bucket, and a conversation whose lease is held simply
 * returns at once.
 */
export function startRecoverySweep(deps: SweepDeps): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const sweep = async () => {
    await deps.beforeSweep?.();
    const bucket = Math.floor(Date.now() / Math.max(deps.intervalMs, 5000));
    const stranded = await findStrandedConversations(deps.db, strandedAfterMs, batch);
    for (const { conversationId, firstEventId } of stranded) {
      await enqueueWake(deps.queue, { conversationId, inboundEventId: null, reason: 'sweep' }, `sweep-${conversationId}-${firstEventId}-${bucket}`);
    }
    const due = await findConversationsWithDueOutbox(deps.db, batch);
    for (const conversationId of due) {
      await enqueueWake(deps.queue, { conversationId, inboundEventId: null, reason: 'outbox' }, `outbox-${conversationId}-${bucket}`);
    }
    if (stranded.length + due.length > 0) deps.log.info({ stranded: stranded.length, outbox: due.length }, 'recovery sweep woke conversations');
  };
  const timer = setInterval(() => {
    if (running) return;
    running = sweep()
      .catch((err: unknown) => deps.log.warn({ err }, 'recovery sweep failed; will try again'))
      .finally(() => (running = undefined));
  }, deps.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
