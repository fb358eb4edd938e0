import { describe, expect, it } from 'vitest';
import { crashStreakChangeOf, crashStreakSuspends } from './runtime-crashes.ts';

describe('crashStreakChangeOf', () => {
  it('adds one for a turn whose runtime child died, and clears on a completed turn', () => {
    expect(crashStreakChangeOf({ status: 'failed', error: 'RUNTIME_CRASHED' })).toBe('increment');
    expect(crashStreakChangeOf({ status: 'failed', error: 'UNEXPECTED' })).toBe('increment');
    expect(crashStreakChangeOf({ status: 'completed' })).toBe('reset');
  });

  it('leaves the streak to other endings: a model error, a timeout, a stop, an interrupt', () => {
    for (const turn of [
      { status: 'failed', error: 'MODEL_FAILED' },
      { status: 'failed', error: 'TURN_TIMEOUT' },
      { status: 'failed', error: null },
      { status: 'cancelled' },
      { status: 'interrupted', error: 'RUNTIME_CRASHED' },
    ]) {
      expect(crashStreakChangeOf(turn), JSON.stringify(turn)).toBe('keep');
    }
  });
});

describe('crashStreakSuspends', () => {
  it('suspends once the streak reaches the threshold, not before', () => {
    expect([0, 1, 2, 3, 4].map((streak) => crashStreakSuspends(streak, 3))).toEqual([false, false, false, true, true]);
    expect(crashStreakSuspends(1, 1)).toBe(true);
  });

  it('played as a run of turns: three crashes in a row suspend, a completed turn in between starts over', () => {
    const play = (turns: { status: string; error?: string }[]) => {
      let streak = 0;
      const suspendedAt: number[] = [];
      turns.forEach((turn, i) => {
        const change = crashStreakChangeOf(turn);
        streak = change === 'increment' ? streak + 1 : change === 'reset' ? 0 : streak;
        if (crashStreakSuspends(streak, 3)) suspendedAt.push(i);
      });
      return suspendedAt;
    };
    const crash = { status: 'failed', error: 'RUNTIME_CRASHED' };
    const ok = { status: 'completed' };
    expect(play([crash, crash, ok, crash, crash])).toEqual([]);
    expect(play([crash, crash, { status: 'cancelled' }, crash])).toEqual([3]);
  });
});
