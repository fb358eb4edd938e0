/**
 * What the `wait` tool may wait (issue 17, defect 3): a call may wait at most
 * `maxSecondsPerCall`, and all calls of one turn together at most the turn's
 * budget. Without these one chat user could hold a worker slot for 600 s a
 * call, eight calls a turn. A refusal is a reason the model reads as the
 * tool's result, never an exception.
 */
export interface WaitAllowance {
  maxSecondsPerCall: number;
  /** The turn's whole budget, ms. */
  budgetMs: number;
  /** What earlier calls of the turn already took from it, ms. */
  spentMs: number;
}

export type WaitDecision =
  | { kind: 'wait'; ms: number }
  | { kind: 'refused'; reason: 'over_call_limit' | 'budget_spent' | 'over_budget'; message: string };

export function decideWait(requestedSeconds: number, allowance: WaitAllowance): WaitDecision {
  const ms = Math.ceil(Math.max(0, requestedSeconds) * 1000);
  const remainingMs = Math.max(0, allowance.budgetMs - allowance.spentMs);
  if (ms > allowance.maxSecondsPerCall * 1000) {
    return { kind: 'refused', reason: 'over_call_limit', message: `refused: one wait may last at most ${allowance.maxSecondsPerCall} seconds` };
  }
  // A zero-second wait waits for nothing, so it is allowed even with the budget spent.
  if (ms === 0) return { kind: 'wait', ms: 0 };
  if (remainingMs === 0) {
    return { kind: 'refused', reason: 'budget_spent', message: `refused: this turn has used all of its ${formatSeconds(allowance.budgetMs)} seconds of waiting; answer without waiting` };
  }
  if (ms > remainingMs) {
    return {
      kind: 'refused',
      reason: 'over_budget',
      message: `refused: only ${formatSeconds(remainingMs)} of this turn's ${formatSeconds(allowance.budgetMs)} seconds of waiting are left; wait less or answer without waiting`,
    };
  }
  return { kind: 'wait', ms };
}

/** Seconds for a message: whole seconds as they are, otherwise one decimal rounded down (never promises more than is left). */
function formatSeconds(ms: number): string {
  const tenths = Math.floor(ms / 100);
  return tenths % 10 === 0 ? String(tenths / 10) : (tenths / 10).toFixed(1);
}
