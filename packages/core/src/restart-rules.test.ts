import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRestartLoop } from './restart-rules.ts';

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
