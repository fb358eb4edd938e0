/**
 * Whether this worker may judge its peers dead by their heartbeats. After
 * its own heartbeat failed (Postgres down or unreachable), every peer's
 * heartbeat failed too, so all of them look silent when the database comes
 * back; only once this worker has beaten again for a whole
 * WORKER_DEAD_AFTER_MS have live peers had the time to beat again, and a
 * silent one is really gone. Without this, a Postgres restart longer than the
 * dead-after window would cut off every other worker's turns and count them
 * as restarts.
 */
export interface HeartbeatHealth {
  recordSuccess(nowMs?: number): void;
  recordFailure(): void;
  canJudgePeers(nowMs?: number): boolean;
}

export function createHeartbeatHealth(deadAfterMs: number, startedAtMs = Date.now()): HeartbeatHealth {
  // At start the worker has not failed: peers left silent before it came are judged at once.
  let healthySinceMs: number | undefined = startedAtMs - deadAfterMs;
  return {
    recordSuccess(nowMs = Date.now()) {
      healthySinceMs ??= nowMs;
    },
    recordFailure() {
      healthySinceMs = undefined;
    },
    canJudgePeers(nowMs = Date.now()) {
      return healthySinceMs !== undefined && nowMs - healthySinceMs >= deadAfterMs;
    },
  };
}
