import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decideWait } from './wait-limits.ts';

const allowance = { maxSecondsPerCall: 60, budgetMs: 120_000, spentMs: 0 };

describe('decideWait', () => {
  it('waits what was asked when it is within the call limit and the turn budget', () => {
    expect(decideWait(20, allowance)).toEqual({ kind: 'wait', ms: 20_000 });
    expect(decideWait(0.8, allowance)).toEqual({ kind: 'wait', ms: 800 });
    expect(decideWait(60, { ...allowance, spentMs: 60_000 })).toEqual({ kind: 'wait', ms: 60_000 });
  });

  it('refuses one wait longer than the call limit, saying the limit', () => {
    expect(decideWait(61, allowance)).toEqual({ kind: 'refused', reason: 'over_call_limit', message: 'refused: one wait may last at most 60 seconds' });
  });

  it('refuses every wait once the budget is spent, and a wait longer than what is left', () => {
    expect(decideWait(1, { ...allowance, spentMs: 120_000 })).toMatchObject({ kind: 'refused', reason: 'budget_spent' });
    const over = decideWait(30, { ...allowance, spentMs: 100_500 });
    expect(over).toEqual({
      kind: 'refused',
      reason: 'over_budget',
      message: "refused: only 19.5 of this turn's 120 seconds of waiting are left; wait less or answer without waiting",
    });
  });

  it('lets a zero-second wait through even with nothing left', () => {
    expect(decideWait(0, { ...allowance, spentMs: 120_000 })).toEqual({ kind: 'wait', ms: 0 });
  });

  it('never lets one turn wait more than its budget, nor one call more than the limit, whatever is asked', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 700, noNaN: true }), { maxLength: 20 }),
        fc.integer({ min: 0, max: 600 }),
        fc.integer({ min: 0, max: 3600 }),
        (asked, maxSecondsPerCall, budgetSeconds) => {
          let spentMs = 0;
          for (const seconds of asked) {
            const decision = decideWait(seconds, { maxSecondsPerCall, budgetMs: budgetSeconds * 1000, spentMs });
            if (decision.kind === 'wait') {
              expect(decision.ms).toBeLessThanOrEqual(maxSecondsPerCall * 1000);
              spentMs += decision.ms;
            }
          }
          expect(spentMs).toBeLessThanOrEqual(budgetSeconds * 1000);
        },
      ),
    );
  });
});
