/**
 * The restart-loop rule (docs/restarts.md): a conversation whose turns were
 * cut off by restarts RESTART_SUSPEND_THRESHOLD times in a row is in a
 * restart loop: no turn begins on it (beginTurn refuses it in its insert) and
 * it is suspended instead of resumed (suspendRestartLoops). Both stay single
 * SQL statements, fenced against a running turn; the count they compare with
 * comes from `restartLoopStartsAt`, and a db-level test checks that they
 * decide as `isRestartLoop` does (apps/worker/src/sql-rules.test.ts).
 */

/** The restart count from which a conversation is in a restart loop. */
export function restartLoopStartsAt(suspendThreshold: number): number {
  // A threshold below 1 would suspend conversations that never restarted; config refuses it, this keeps the rule whole.
  return Math.max(1, Math.floor(suspendThreshold));
}

export function isRestartLoop(restartCount: number, suspendThreshold: number): boolean {
  return restartCount >= restartLoopStartsAt(suspendThreshold);
}

