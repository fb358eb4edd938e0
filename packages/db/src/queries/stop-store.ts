import type { Database } from '../client.ts';

/**
 * Records on a still-pending /stop event the turn it cancelled (its
 * `turn_id`), so whichever worker answers that /stop says "Stopped." — the
 * worker that cancelled the turn may be stopped, killed or lose the
 * conversation before it gets to the command, and then the next holder
 * answers it (found by the randomized fault scenarios, docs/turns.md).
 * Written right after the cancelled turn's commit, before the lease is
 * released; the command's own commit marks the event done.
 */
export async function recordStoppingEvent(db: Database, stopEventId: number, turnId: number): Promise<void> {
  await db.$client`update inbound_events set turn_id = ${turnId} where id = ${stopEventId} and status = 'pending'`;
}
