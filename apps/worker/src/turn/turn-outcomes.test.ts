import { describe, expect, it } from 'vitest';
import { initialTurnState, reduceActiveTurn, type ActiveTurnEvent, type ActiveTurnState } from './active-turn.ts';
import { stoppedExecution } from './execute-turn.ts';
import { afterNotBegun } from './settle-stale-turn.ts';
import { noticeForFailure, notices } from './turn-notices.ts';

// What a stopped, failed or refused turn comes to, without a database.

function stateAfter(...events: ActiveTurnEvent[]): ActiveTurnState {
  return events.reduce((state, e) => reduceActiveTurn(state, e).state, initialTurnState('queue'));
}

describe('stoppedExecution', () => {
  it('ends a timed-out turn failed with one notice, and a stopped or interrupted one silently', () => {
    expect(stoppedExecution(stateAfter({ kind: 'stop', reason: 'timeout' }))).toEqual({ entries: [], status: 'failed', error: 'TURN_TIMEOUT', replyText: notices.timedOut });
    expect(stoppedExecution(stateAfter({ kind: 'taken', upTo: 1 }, { kind: 'signal', signal: { kind: 'stop', inboundEventId: 2, storedAt: 0 } }))).toEqual({ entries: [], status: 'cancelled', replyText: null });
    expect(stoppedExecution(stateAfter({ kind: 'stop', reason: 'lease_lost' }))).toEqual({ entries: [], status: 'interrupted', replyText: null });
  });
});

describe('noticeForFailure', () => {
  it('tells a rate-limited or refused user so, and anyone else that it went wrong', () => {
    expect(noticeForFailure('MODEL_RATE_LIMITED')).toBe(notices.rateLimited);
    expect(noticeForFailure('MODEL_REFUSED')).toBe(notices.refused);
    expect(noticeForFailure('MODEL_TIMEOUT')).toBe(notices.failed);
    expect(noticeForFailure('RUNTIME_CRASHED')).toBe(notices.runtimeCrashed);
  });
});

describe('afterNotBegun', () => {
  it('settles a turn that appeared meanwhile, defers a busy user, and rechecks at the restart threshold', () => {
    expect(afterNotBegun({ kind: 'occupied' })).toBe('settle');
    expect(afterNotBegun({ kind: 'user_busy' })).toBe('deferred');
    expect(afterNotBegun({ kind: 'restart_loop' })).toBe('recheck');
  });
});
