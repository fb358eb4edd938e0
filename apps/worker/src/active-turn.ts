import { shouldInterrupt, type BusyInputModeName } from '@switchboard/core';
import type { ConversationSignal } from '@switchboard/queue';
import type { WorkerMetrics } from './worker-metrics.ts';

/**
 * Why a turn stopped. `not_begun`: its running-turn row was refused (another
 * turn still runs, the restart threshold was reached, or its user runs
 * USER_MAX_RUNNING_TURNS already), so it must not go on. `timeout`: it ran
 * TURN_TIMEOUT_MS (issue 17, defect 3).
 */
export type StopReason = 'interrupt' | 'stop' | 'shutdown' | 'lease_lost' | 'not_begun' | 'timeout';

/**
 * The in-process handle of a conversation's turn, registered BEFORE the
 * turn reads its pending input. A signal for an event the turn has not taken
 * stops it; a signal that arrives before the turn knows what it took is kept
 * and applied as soon as it does. That ordering is what makes a lost
 * interrupt impossible (docs/turns.md).
 */
export interface ActiveTurn {
  conversationId: number;
  mode: BusyInputModeName;
  controller: AbortController;
  /** Highest inbound event id this turn took; undefined while it is still reading its input. */
  takenUpTo: number | undefined;
  signalledInputUpTo: number;
  signalledStopUpTo: number;
  stopReason?: StopReason;
  /** The /stop event that told this turn to stop, so its reply can say "Stopped". */
  stoppedByEventId?: number;
  /** How the turn ended, once committed. */
  outcome?: 'completed' | 'interrupted' | 'failed' | 'cancelled';
}

export function createActiveTurn(conversationId: number, mode: BusyInputModeName): ActiveTurn {
  return { conversationId, mode, controller: new AbortController(), takenUpTo: undefined, signalledInputUpTo: 0, signalledStopUpTo: 0 };
}

/** Stops the turn once; later reasons do not overwrite the first. */
export function stopTurn(turn: ActiveTurn, reason: StopReason): void {
  if (turn.controller.signal.aborted) return;
  turn.stopReason = reason;
  turn.controller.abort();
}

/** Applies a signal from the gateway or an operator to this process's turn of that conversation. */
export function applySignal(turn: ActiveTurn, signal: ConversationSignal, metrics: WorkerMetrics): void {
  const operatorStop = signal.kind === 'stop' && signal.inboundEventId === 0;
  if (!operatorStop && turn.takenUpTo === undefined) {
    // The mode may not be known yet either: markTaken decides once both are.
    if (signal.kind === 'stop') turn.signalledStopUpTo = Math.max(turn.signalledStopUpTo, signal.inboundEventId);
    else turn.signalledInputUpTo = Math.max(turn.signalledInputUpTo, signal.inboundEventId);
    return;
  }
  if (!operatorStop && !shouldInterrupt(turn.mode, signal.kind)) return;
  if (!operatorStop && signal.inboundEventId <= (turn.takenUpTo ?? 0)) return;
  if (turn.controller.signal.aborted) return;
  if (signal.kind === 'stop') turn.stoppedByEventId = signal.inboundEventId || undefined;
  stopTurn(turn, signal.kind === 'stop' ? 'stop' : 'interrupt');
  metrics.observeInterrupt(Date.now() - signal.storedAt);
}

/** Records what the turn took, and applies any signal that came in while it was reading. */
export function markTaken(turn: ActiveTurn, upTo: number): void {
  turn.takenUpTo = Math.max(turn.takenUpTo ?? 0, upTo);
  if (turn.signalledStopUpTo > turn.takenUpTo) {
    turn.stoppedByEventId = turn.signalledStopUpTo;
    stopTurn(turn, 'stop');
  } else if (turn.mode === 'interrupt' && turn.signalledInputUpTo > turn.takenUpTo) {
    stopTurn(turn, 'interrupt');
  }
}
