import { shouldInterrupt, type BusyInputModeName } from '@switchboard/core';
import type { ConversationSignal } from '@switchboard/queue';
import type { WorkerMetrics } from '../worker-metrics.ts';

/**
 * Why a turn stopped. `not_begun`: its running-turn row was refused (another
 * turn still runs, the restart threshold was reached, or its user runs
 * USER_MAX_RUNNING_TURNS already), so it must not go on. `timeout`: it ran
 * TURN_TIMEOUT_MS (issue 17, defect 3).
 */
export type StopReason = 'interrupt' | 'stop' | 'shutdown' | 'lease_lost' | 'not_begun' | 'timeout';

/** How a turn ended, once committed. */
export type TurnStatus = 'completed' | 'interrupted' | 'failed' | 'cancelled';

/**
 * What this process knows about a conversation's running turn: the whole of
 * what an interrupt or a stop means lives in `reduceActiveTurn` below, which
 * is pure (no clock, no abort controller, no metrics) and unit-tested.
 */
export interface ActiveTurnState {
  mode: BusyInputModeName;
  /** Highest inbound event id this turn took; undefined while it is still reading its input. */
  takenUpTo: number | undefined;
  /** Signals that came before the turn knew what it took: applied once it does. */
  signalledInputUpTo: number;
  signalledStopUpTo: number;
  /** Set once, by the first reason; the turn is stopped exactly when it is set. */
  stopReason?: StopReason;
  /** The /stop event that told this turn to stop, so its reply can say "Stopped". */
  stoppedByEventId?: number;
  outcome?: TurnStatus;
}

/** What can happen to a running turn. */
export type ActiveTurnEvent =
  /** A signal from the gateway (input or /stop) or an operator (a stop for event 0). */
  | { kind: 'signal'; signal: Pick<ConversationSignal, 'kind' | 'inboundEventId' | 'storedAt'> }
  /** The conversation row was read: its busy mode is known. */
  | { kind: 'mode_known'; mode: BusyInputModeName }
  /** The turn took its input (or steered more in) up to this event id. */
  | { kind: 'taken'; upTo: number }
  /** This process stops the turn itself: shutdown, lease lost, row refused, out of time. */
  | { kind: 'stop'; reason: Exclude<StopReason, 'interrupt' | 'stop'> }
  | { kind: 'committed'; outcome: TurnStatus };

/** The side effects the shell carries out. */
export type ActiveTurnAction =
  /** Cut every wait of the turn (model request, tool, compression) at once. */
  | { kind: 'abort' }
  /** A signal stopped the turn: how long it took from storing the input (interrupt latency). */
  | { kind: 'observe_interrupt'; storedAt: number };

export interface Reduced {
  state: ActiveTurnState;
  actions: ActiveTurnAction[];
}

export function initialTurnState(mode: BusyInputModeName): ActiveTurnState {
  return { mode, takenUpTo: undefined, signalledInputUpTo: 0, signalledStopUpTo: 0 };
}

/**
 * The turn's state machine. A signal for an event the turn has not taken
 * stops it (in the modes where it should); a signal that arrives before the
 * turn knows what it took is kept and applied as soon as it does. The handle
 * is registered BEFORE the turn reads its pending input, and that ordering is
 * what makes a lost interrupt impossible (docs/turns.md).
 */
export function reduceActiveTurn(state: ActiveTurnState, event: ActiveTurnEvent): Reduced {
  switch (event.kind) {
    case 'signal':
      return applySignal(state, event.signal);
    case 'mode_known':
      return { state: { ...state, mode: event.mode }, actions: [] };
    case 'taken':
      return applyTaken(state, event.upTo);
    case 'stop':
      return stopOnce(state, event.reason);
    case 'committed':
      return { state: { ...state, outcome: event.outcome }, actions: [] };
  }
}

/** Stops the turn once; later reasons do not overwrite the first. */
function stopOnce(state: ActiveTurnState, reason: StopReason): Reduced {
  if (state.stopReason !== undefined) return { state, actions: [] };
  return { state: { ...state, stopReason: reason }, actions: [{ kind: 'abort' }] };
}

function applySignal(state: ActiveTurnState, signal: Pick<ConversationSignal, 'kind' | 'inboundEventId' | 'storedAt'>): Reduced {
  const operatorStop = signal.kind === 'stop' && signal.inboundEventId === 0;
  if (!operatorStop && state.takenUpTo === undefined) {
    // The mode may not be known yet either: `taken` decides once both are.
    const kept =
      signal.kind === 'stop'
        ? { ...state, signalledStopUpTo: Math.max(state.signalledStopUpTo, signal.inboundEventId) }
        : { ...state, signalledInputUpTo: Math.max(state.signalledInputUpTo, signal.inboundEventId) };
    return { state: kept, actions: [] };
  }
  if (!operatorStop && !shouldInterrupt(state.mode, signal.kind)) return { state, actions: [] };
  if (!operatorStop && signal.inboundEventId <= (state.takenUpTo ?? 0)) return { state, actions: [] };
  if (state.stopReason !== undefined) return { state, actions: [] };
  const stoppedByEventId = signal.kind === 'stop' ? signal.inboundEventId || undefined : state.stoppedByEventId;
  const stopped = stopOnce({ ...state, stoppedByEventId }, signal.kind === 'stop' ? 'stop' : 'interrupt');
  return { state: stopped.state, actions: [...stopped.actions, { kind: 'observe_interrupt', storedAt: signal.storedAt }] };
}

/** Records what the turn took, and applies any signal that came in while it was reading. */
function applyTaken(state: ActiveTurnState, upTo: number): Reduced {
  const takenUpTo = Math.max(state.takenUpTo ?? 0, upTo);
  const next = { ...state, takenUpTo };
  if (next.signalledStopUpTo > takenUpTo) return stopOnce({ ...next, stoppedByEventId: next.signalledStopUpTo }, 'stop');
  if (next.mode === 'interrupt' && next.signalledInputUpTo > takenUpTo) return stopOnce(next, 'interrupt');
  return { state: next, actions: [] };
}

/** How a turn the runtime left early ends: out of time (one notice, `failed`), cancelled by /stop, or interrupted. */
export function stoppedTurnStatus(state: ActiveTurnState): 'timed_out' | 'cancelled' | 'interrupted' {
  if (state.stopReason === 'timeout') return 'timed_out';
  return state.stopReason === 'stop' ? 'cancelled' : 'interrupted';
}

/**
 * What becomes of a turn that ran, before its commit: a shutdown leaves it
 * running (the restart is counted, the next holder resumes it); a lost lease
 * abandons it uncounted (its input stays pending for the new holder);
 * anything else is committed.
 */
export function settlementOf(state: ActiveTurnState): 'leave_running' | 'abandon' | 'commit' {
  if (state.stopReason === 'shutdown') return 'leave_running';
  if (state.stopReason === 'lease_lost') return 'abandon';
  return 'commit';
}

/**
 * The /stop that cancelled this turn, so its reply says "Stopped." (a stop
 * that lands after the answer is complete did not cancel anything).
 * `status` is the turn's status as committed, or as about to be.
 */
export function cancellingStopOf(state: ActiveTurnState, status: TurnStatus | undefined = state.outcome): number | undefined {
  return status === 'cancelled' ? state.stoppedByEventId : undefined;
}

/**
 * The in-process handle of a conversation's turn: the reducer's state plus
 * the shell that carries out its actions (the abort controller, the metric).
 */
export interface ActiveTurn {
  conversationId: number;
  controller: AbortController;
  readonly state: ActiveTurnState;
  dispatch(event: ActiveTurnEvent): void;
}

export function createActiveTurn(conversationId: number, mode: BusyInputModeName, metrics: Pick<WorkerMetrics, 'observeInterrupt'>): ActiveTurn {
  const controller = new AbortController();
  let state = initialTurnState(mode);
  return {
    conversationId,
    controller,
    get state() {
      return state;
    },
    dispatch(event) {
      const reduced = reduceActiveTurn(state, event);
      state = reduced.state;
      for (const action of reduced.actions) {
        if (action.kind === 'abort') controller.abort();
        else metrics.observeInterrupt(Date.now() - action.storedAt);
      }
    },
  };
}
