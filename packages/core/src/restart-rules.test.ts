import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countsAsRestart, isRestartLoop, judgeStaleTurn, staleTurnRule, type TurnWorker } from './restart-rules.ts';

describe('the restart-loop rule', () => {
  it('is a loop from the threshold on (3 cut-offs in a row with the default)', () => {
    expect([0, 1, 2, 3, 4].map((count) => isRestartLoop(count, 3))).toEqual([false, false, false, true, true]);
  });

  it('never calls a conversation that never restarted a loop, and stays a loop as restarts add up', () => {
    fc.assert(
      fc.property(fc.nat(50), fc.integer({ min: 0, max: 50 }), (count, threshold) => {
        expect(isRestartLoop(0, threshold)).toBe(false);
        if (isRestartLoop(count, threshold)) expect(isRestartLoop(count + 1, threshold)).toBe(true);
      }),
    );
  });
});

describe('which restarts count: the stale-turn rule', () => {
  const deadAfterMs = 5000;
  const worker = fc.record({
    status: fc.constantFrom<TurnWorker['status']>('running', 'stopping', 'stopped', 'dead'),
    heartbeatAgeMs: fc.integer({ min: 0, max: 60_000 }),
  });

  it('supersedes the turn of a live worker and cuts off (counted) that of a dead, stopping or missing one', () => {
    expect(judgeStaleTurn({ status: 'running', heartbeatAgeMs: 1000 }, deadAfterMs)).toBe('superseded');
    expect(judgeStaleTurn({ status: 'running', heartbeatAgeMs: deadAfterMs }, deadAfterMs)).toBe('superseded');
    expect(judgeStaleTurn({ status: 'running', heartbeatAgeMs: deadAfterMs + 1 }, deadAfterMs)).toBe('cut_off');
    expect(judgeStaleTurn({ status: 'stopping', heartbeatAgeMs: 0 }, deadAfterMs)).toBe('cut_off');
    expect(judgeStaleTurn({ status: 'dead', heartbeatAgeMs: 0 }, deadAfterMs)).toBe('cut_off');
    expect(judgeStaleTurn(null, deadAfterMs)).toBe('cut_off');
    expect([countsAsRestart('cut_off'), countsAsRestart('superseded')]).toEqual([true, false]);
  });

  it('counts a restart exactly when the worker is not running or silent past the limit', () => {
    fc.assert(
      fc.property(worker, fc.integer({ min: 0, max: 60_000 }), (w, limit) => {
        const alive = w.status === 'running' && w.heartbeatAgeMs <= limit;
        expect(countsAsRestart(judgeStaleTurn(w, limit))).toBe(!alive);
      }),
    );
  });

  it('never turns a cut-off into a supersession as the heartbeat gets older', () => {
    fc.assert(
      fc.property(worker, fc.nat(60_000), (w, more) => {
        if (judgeStaleTurn(w, deadAfterMs) === 'cut_off') expect(judgeStaleTurn({ ...w, heartbeatAgeMs: w.heartbeatAgeMs + more }, deadAfterMs)).toBe('cut_off');
      }),
    );
  });

  it('gives the statements the same bounds and endings it judges with', () => {
    expect(staleTurnRule(5000)).toEqual({
      liveStatus: 'running', maxHeartbeatAgeMs: 5000,
      cutOff: { status: 'failed', error: 'cut_off_by_restart' }, superseded: { status: 'interrupted', error: 'lease_lost' },
    });
  });
});
