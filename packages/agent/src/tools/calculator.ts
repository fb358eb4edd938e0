import { checkExpression } from './calculator-expression.ts';
import { CalculatorPool } from './calculator-pool.ts';

export { CalculatorError } from './calculator-expression.ts';

// One pool per process: its threads hold no conversation state (a fresh scope each call,
// and the allowlist leaves nothing that could change the instance), so sharing them is safe.
let pool: CalculatorPool | undefined;

/**
 * Evaluates an arithmetic expression: refused unless the allowlist passes, then run in a
 * limited thread. Throws `CalculatorError` (stable `code`) for anything refused or stopped.
 */
export async function calculate(expression: string): Promise<string> {
  checkExpression(expression);
  pool ??= new CalculatorPool();
  return pool.evaluate(expression);
}
