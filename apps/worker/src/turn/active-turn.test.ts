import { describe, expect, it } from 'vitest';
import {
  cancellingStopOf,
  createActiveTurn,
  initialTurnState,
  reduceActiveTurn,
  settlementOf,
  stoppedTurnStatus,
  type ActiveTurnEvent,
  type ActiveTurnState,
} from './active-turn.ts';

const input = (inboundEventId: number): ActiveTurnEvent => ({ kind: 'signal', signal: { kind: 'input', inboundEventId, storedAt: 1000 } });
const stop = (inboundEventId: number): ActiveTurnEvent => ({ kind: 'signal', signal: { kind: 'stop', inboundEventId, storedAt: 1000 } });

/** Feeds the events in order; returns the last state and every action. */
function run(state: ActiveTurnState, ...events: ActiveTurnEvent[]) {
  const actions = [];
  for (const event of events) {
    const reduced = reduceActiveTurn(state, event);
    state = reduced.state;
    actions.push(...reduced.actions);
  }
  return { state, actions };
}

describe('reduceActiveTurn', () => {
  it('stops a turn in mode interrupt on input it has not taken, and measures the latency', () => {
    const { state, actions } = run(initialTurnState('interrupt'), { kind: 'taken', upTo: 5 }, input(6));
    expect(state.stopReason).toBe('interrupt');
    expect(actions).toEqual([{ kind: 'abort' }, { kind: 'observe_interrupt', storedAt: 1000 }]);
  });

  it('ignores input the turn already took, and input in the modes that do not interrupt', () => {
    expect(run(initialTurnState('interrupt'), { kind: 'taken', upTo: 5 }, input(5)).actions).toEqual([]);
    for (const mode of ['queue', 'collect', 'steer'] as const) {
      const { state, actions } = run(initialTurnState(mode), { kind: 'taken', upTo: 5 }, input(6));
      expect(state.stopReason).toBeUndefined();
      expect(actions).toEqual([]);
    }
  });

  it('stops on /stop in every mode and remembers which /stop it was', () => {
    for (const mode of ['interrupt', 'queue', 'collect', 'steer'] as const) {
      const { state } = run(initialTurnState(mode), { kind: 'taken', upTo: 5 }, stop(7));
      expect(state).toMatchObject({ stopReason: 'stop', stoppedByEventId: 7 });
    }
  });

  it('keeps a signal that came while the input was being read, and applies it once the turn knows what it took', () => {
    const kept = run(initialTurnState('queue'), stop(9), input(8), { kind: 'mode_known', mode: 'interrupt' });
    expect(kept.actions).toEqual([]);
    expect(kept.state.stopReason).toBeUndefined();
    const { state, actions } = run(kept.state, { kind: 'taken', upTo: 8 });
    expect(state).toMatchObject({ stopReason: 'stop', stoppedByEventId: 9, takenUpTo: 8 });
    expect(actions).toEqual([{ kind: 'abort' }]);
  });

  it('drops a kept signal for input the turn took itself', () => {
    const { state, actions } = run(initialTurnState('interrupt'), input(4), stop(4), { kind: 'taken', upTo: 4 });
    expect(state.stopReason).toBeUndefined();
    expect(actions).toEqual([]);
  });

  it('applies kept input only in mode interrupt, with the mode known when the input is taken', () => {
    expect(run(initialTurnState('interrupt'), input(6), { kind: 'mode_known', mode: 'queue' }, { kind: 'taken', upTo: 5 }).state.stopReason).toBeUndefined();
    expect(run(initialTurnState('queue'), input(6), { kind: 'mode_known', mode: 'interrupt' }, { kind: 'taken', upTo: 5 }).state.stopReason).toBe('interrupt');
  });

  it("applies an operator's stop (event 0) at once, even before the input is taken", () => {
    const { state, actions } = run(initialTurnState('queue'), stop(0));
    expect(state.stopReason).toBe('stop');
    expect(state.stoppedByEventId).toBeUndefined();
    expect(actions.map((a) => a.kind)).toEqual(['abort', 'observe_interrupt']);
  });

  it('keeps the first reason: a later stop neither overwrites it nor aborts twice', () => {
    const { state, actions } = run(initialTurnState('interrupt'), { kind: 'taken', upTo: 1 }, { kind: 'stop', reason: 'timeout' }, stop(2), { kind: 'stop', reason: 'shutdown' });
    expect(state.stopReason).toBe('timeout');
    expect(state.stoppedByEventId).toBeUndefined();
    expect(actions).toEqual([{ kind: 'abort' }]);
  });

  it('steered input moves what the turn took forward, so a signal for it no longer stops the turn', () => {
    const { state } = run(initialTurnState('steer'), { kind: 'taken', upTo: 3 }, { kind: 'taken', upTo: 6 }, { kind: 'taken', upTo: 4 });
    expect(state.takenUpTo).toBe(6);
    expect(run(state, stop(6)).state.stopReason).toBeUndefined();
  });
});

describe('what a stop means for the turn', () => {
  const stoppedBy = (...events: ActiveTurnEvent[]) => run(initialTurnState('interrupt'), { kind: 'taken', upTo: 1 }, ...events).state;

  it('ends a stopped turn as timed out, cancelled or interrupted', () => {
    expect(stoppedTurnStatus(stoppedBy({ kind: 'stop', reason: 'timeout' }))).toBe('timed_out');
    expect(stoppedTurnStatus(stoppedBy(stop(2)))).toBe('cancelled');
    expect(stoppedTurnStatus(stoppedBy(input(2)))).toBe('interrupted');
    expect(stoppedTurnStatus(stoppedBy({ kind: 'stop', reason: 'not_begun' }))).toBe('interrupted');
  });

  it('leaves a shut-down turn running, abandons one whose lease was lost, and commits the rest', () => {
    expect(settlementOf(stoppedBy({ kind: 'stop', reason: 'shutdown' }))).toBe('leave_running');
    expect(settlementOf(stoppedBy({ kind: 'stop', reason: 'lease_lost' }))).toBe('abandon');
    expect(settlementOf(stoppedBy(stop(2)))).toBe('commit');
    expect(settlementOf(stoppedBy())).toBe('commit');
  });

  it('credits the /stop only when it really cancelled the turn', () => {
    const stopped = stoppedBy(stop(2));
    expect(cancellingStopOf(stopped, 'cancelled')).toBe(2);
    expect(cancellingStopOf(stopped)).toBeUndefined();
    expect(cancellingStopOf(run(stopped, { kind: 'committed', outcome: 'cancelled' }).state)).toBe(2);
    expect(cancellingStopOf(run(stopped, { kind: 'committed', outcome: 'completed' }).state)).toBeUndefined();
  });
});

describe('createActiveTurn (the shell)', () => {
  it('aborts the controller and observes the latency as the reducer says', () => {
    const observed: number[] = [];
    const turn = createActiveTurn(7, 'interrupt', { observeInterrupt: (ms) => observed.push(ms) });
    turn.dispatch(input(3));
    expect(turn.controller.signal.aborted).toBe(false);
    turn.dispatch({ kind: 'taken', upTo: 2 });
    expect(turn.controller.signal.aborted).toBe(true);
    expect(turn.state.stopReason).toBe('interrupt');
    // A kept signal is applied by `taken`: no latency is observed for it.
    expect(observed).toEqual([]);
    turn.dispatch(stop(9));
    expect(turn.state.stoppedByEventId).toBeUndefined();
  });
});
