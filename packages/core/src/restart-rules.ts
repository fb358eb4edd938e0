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


/**
 * Which restarts count (docs/restarts.md "Counting"): a running turn whose
 * holder lost the conversation is settled by what became of its worker. A
 * worker that is `running` and beat within `WORKER_DEAD_AFTER_MS` is alive:
 * it only lost the lease (a Redis restart or failover), so its turn is
 * superseded and nothing is counted. Any other worker — stopping, stopped,
 * dead, silent for longer, or not registered at all — was stopped or
 * crashed: its turn was cut off by a restart and counts one toward the
 * restart loop. settleRunningTurn and cutOffRunningTurns stay single SQL
 * statements; they take the bounds and the endings they write from
 * `staleTurnRule`, and a db-level test checks that settleRunningTurn decides
 * as `judgeStaleTurn` does (apps/worker/src/sql-rules.test.ts).
 */

/** A running turn's worker as the workers table shows it; `null` when it has no row. */
export interface TurnWorker {
  status: 'running' | 'stopping' | 'stopped' | 'dead';
  /** How long ago it last beat, by the database clock. */
  heartbeatAgeMs: number;
}

/** `cut_off`: a restart cut the turn off and it counts one; `superseded`: its live worker lost the lease, no restart. */
export type StaleTurnFate = 'cut_off' | 'superseded';

/** What a settled turn's row says: its status and error. */
export const staleTurnEndings = {
  cut_off: { status: 'failed', error: 'cut_off_by_restart' },
  superseded: { status: 'interrupted', error: 'lease_lost' },
} as const satisfies Record<StaleTurnFate, { status: string; error: string }>;

/** The parameters the settling statements compare with and write (settleRunningTurn, cutOffRunningTurns). */
export function staleTurnRule(deadAfterMs: number) {
  return {
    /** The one worker status that can be alive. */
    liveStatus: 'running',
    /** A live worker beat at most this long ago (a heartbeat exactly this old still counts). */
    maxHeartbeatAgeMs: Math.max(0, Math.floor(deadAfterMs)),
    cutOff: staleTurnEndings.cut_off,
    superseded: staleTurnEndings.superseded,
  } as const;
}

export function isWorkerAlive(worker: TurnWorker | null, deadAfterMs: number): boolean {
  const rule = staleTurnRule(deadAfterMs);
  return worker !== null && worker.status === rule.liveStatus && worker.heartbeatAgeMs <= rule.maxHeartbeatAgeMs;
}

export function judgeStaleTurn(worker: TurnWorker | null, deadAfterMs: number): StaleTurnFate {
  return isWorkerAlive(worker, deadAfterMs) ? 'superseded' : 'cut_off';
}

/** Only a cut-off turn counts toward the restart loop; a superseded one never does. */
export function countsAsRestart(fate: StaleTurnFate): boolean {
  return fate === 'cut_off';
}
