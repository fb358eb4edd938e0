import { describe, expect, it } from 'vitest';
import { CalculatorError, calculate } from './calculator.ts';
import { CalculatorPool } from './calculator-pool.ts';
import { createToolRegistry } from './tool-registry.ts';
import { builtinTools } from './builtin-tools.ts';

const hostile = {
  recursion: 'f(n) = n < 2 ? n : f(n-1) + f(n-2); f(40)',
  bigMatrix: 'size(zeros(8000,8000))',
  unitChange: 'createUnit("km", "1 m", {override: true})',
  bigRange: 'range(1,200000)',
};

async function codeOf(pending: Promise<unknown>): Promise<string> {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CalculatorError);
  return (error as CalculatorError).code;
}

describe('calculator', () => {
  it('computes ordinary arithmetic, functions, constants and unit conversion', async () => {
    expect(await calculate('2+3*4')).toBe('14');
    expect(await calculate('sqrt(16)')).toBe('4');
    expect(await calculate('10 km to m')).toBe('10000 m');
    expect(await calculate('sin(pi/2)')).toBe('1');
    expect(await calculate('(2 + 3) * 4 / 8')).toBe('2.5');
    expect(await calculate('5!')).toBe('120');
  });

  it.each(Object.entries(hostile))('refuses %s quickly with a readable error', async (_name, expression) => {
    const started = Date.now();
    expect(await codeOf(calculate(expression))).toBe('CALC_REFUSED');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('refuses evaluate, parse, simplify, import, matrices and assignments', async () => {
    for (const expression of ['evaluate("1+1")', 'parse("1")', 'simplify("x+x")', 'import({a: 1})', '[1,2,3]', 'x = 5', 'ones(3)', 'a.b', '"text"']) {
      expect(await codeOf(calculate(expression)), expression).toMatch(/^CALC_(REFUSED|INVALID)$/);
    }
  });

  it('still converts 5 km to 5000 m after a createUnit attempt', async () => {
    await codeOf(calculate(hostile.unitChange));
    expect(await calculate('5 km to m')).toBe('5000 m');
  });

  it('answers the model with a tool error, never a throw', async () => {
    const registry = createToolRegistry(builtinTools);
    const context = { signal: new AbortController().signal };
    for (const expression of Object.values(hostile)) {
      expect(await registry.call('calculator', JSON.stringify({ expression }), context)).toMatch(/^error: refused: .*only arithmetic is allowed/);
    }
    expect(await registry.call('calculator', JSON.stringify({ expression: '6 * 7' }), context)).toBe('42');
  });
});

// The thread's own limits, without the allowlist in front: what stops an expression the allowlist missed.
describe('calculator thread limits', () => {
  const pool = new CalculatorPool({ timeoutMs: 2_000, maxHeapMb: 64, maxResultChars: 1_000, threads: 1 });

  it('stops a runaway recursion at the time limit and answers the next call', async () => {
    await pool.evaluate('1+1'); // warm: the limit counts from when the thread has the call
    const started = Date.now();
    expect(await codeOf(pool.evaluate(hostile.recursion))).toBe('CALC_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(await pool.evaluate('2+3*4')).toBe('14');
  });

  it('stops a huge allocation at the memory limit, the process surviving', async () => {
    expect(await codeOf(pool.evaluate(hostile.bigMatrix))).toMatch(/^CALC_(MEMORY|TIMEOUT)$/);
    expect(await pool.evaluate('sqrt(16)')).toBe('4');
  });

  it('caps the result and keeps units unchanged', async () => {
    expect(await codeOf(pool.evaluate('ones(600)'))).toBe('CALC_FAILED');
    expect(await codeOf(pool.evaluate(hostile.unitChange))).toBe('CALC_FAILED');
    expect(await pool.evaluate('5 km to m')).toBe('5000 m');
  });
});
