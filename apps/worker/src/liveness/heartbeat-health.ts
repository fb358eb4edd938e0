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
  /**
   * Whether this worker may still send on behalf of what it holds: its last
   * beat is recent enough that no peer can have declared it dead yet (less
   * than 0.8 of WORKER_DEAD_AFTER_MS ago, the rest a margin for the send).
   * After a stall (SIGSTOP, a long GC) the code that wakes first is often a
   * send's continuation, before the next beat learns the worker was declared
   * dead and exits: this check, made just before each platform call, keeps
   * that send from repeating what the new holder already sent.
   */
  mayAct(nowMs?: number): boolean;
  /**
   * `mayAct()` now, synchronously true; otherwise a promise settled by the
   * next successful beat (true) or by `signal` (false). A worker declared dead
   * never gets that beat: the beat that learns it ends the process.
   */
  waitToAct(signal: AbortSignal): true | Promise<boolean>;
}

export function createHeartbeatHealth(deadAfterMs: number, startedAtMs = Date.now()): HeartbeatHealth {
  // At start the worker has not failed: peers left silent before it came are judged at once.
  let healthySinceMs: number | undefined = startedAtMs - deadAfterMs;
  let lastBeatMs = startedAtMs;
  // Who waits for the next beat (waitToAct): called with true by it.
  const waiting = new Set<(fresh: boolean) => void>();
  const mayAct = (nowMs = Date.now()) => nowMs - lastBeatMs < deadAfterMs * 0.8;
  return {
    recordSuccess(nowMs = Date.now()) {
      healthySinceMs ??= nowMs;
      lastBeatMs = nowMs;
      for (const settle of waiting) settle(true);
    },
    recordFailure() {
      healthySinceMs = undefined;
    },
    canJudgePeers(nowMs = Date.now()) {
      return healthySinceMs !== undefined && nowMs - healthySinceMs >= deadAfterMs;
    },
    mayAct,
    waitToAct(signal) {
      if (mayAct()) return true;
      if (signal.aborted) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const settle = (fresh: boolean) => {
          waiting.delete(settle);
          signal.removeEventListener('abort', onAbort);
          resolve(fresh);
        };
        const onAbort = () => settle(false);
        waiting.add(settle);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}
