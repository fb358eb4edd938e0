/**
 * After the drain, close() still cuts off what runs (one statement), writes
 * the heartbeat's last row and closes its clients: 5 s for that.
 */
export const afterDrainMs = 5_000;

/**
 * How long a stopping worker may take before close-with-grace ends it (exit
 * code 1): the drain an operator set (DRAIN_TIMEOUT_MS) plus the close after
 * it, never less than 15 s. A fixed 15 s cut any drain past about 10 s short.
 */
export function hardStopMsFor(drainTimeoutMs: number): number {
  return Math.max(15_000, drainTimeoutMs + afterDrainMs);
}
