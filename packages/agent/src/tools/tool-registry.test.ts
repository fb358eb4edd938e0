import { describe, expect, it } from 'vitest';
import { builtinTools, createBuiltinTools } from './builtin-tools.ts';
import { createToolRegistry } from './tool-registry.ts';

const registry = createToolRegistry(builtinTools);
const context = () => ({ signal: new AbortController().signal });

describe('createToolRegistry', () => {
  it('offers the contract tool names with JSON-schema parameters', () => {
    expect(registry.definitions.map((d) => d.name)).toEqual(['current_time', 'calculator', 'wait']);
    const calculator = registry.definitions.find((d) => d.name === 'calculator');
    expect(calculator?.parameters).toMatchObject({ type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] });
  });

  it('computes with the calculator', async () => {
    expect(await registry.call('calculator', JSON.stringify({ expression: '(2 + 3) * 4' }), context())).toBe('20');
  });

  it('returns errors as tool results instead of throwing', async () => {
    expect(await registry.call('nope', '{}', context())).toMatch(/unknown tool/);
    expect(await registry.call('calculator', '{not json', context())).toMatch(/not valid JSON/);
    expect(await registry.call('calculator', JSON.stringify({ expression: '' }), context())).toMatch(/invalid arguments/);
    expect(await registry.call('calculator', JSON.stringify({ expression: 'unknownFn(1)' }), context())).toMatch(/^error:/);
  });

  it('stops the wait tool as soon as the turn is aborted', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = registry.call('wait', JSON.stringify({ seconds: 30 }), { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('offers wait with its per-call limit as the schema maximum, and refuses a longer wait as a tool error', async () => {
    const limited = createToolRegistry(createBuiltinTools({ waitMaxSeconds: 5 }));
    const wait = limited.definitions.find((d) => d.name === 'wait');
    expect(wait?.parameters).toMatchObject({ properties: { seconds: { type: 'number', minimum: 0, maximum: 5 } } });
    expect(wait?.description).toContain('at most 5');
    const started = Date.now();
    expect(await limited.call('wait', JSON.stringify({ seconds: 600 }), context())).toBe('error: invalid arguments: seconds at most 5 seconds per call');
    expect(Date.now() - started).toBeLessThan(100);
  });

  it('takes each wait from the turn budget and refuses, at once, what the budget no longer covers', async () => {
    const waitBudget = { budgetMs: 300, spentMs: 0 };
    const call = (seconds: number) => registry.call('wait', JSON.stringify({ seconds }), { ...context(), waitBudget });
    expect(await call(0.2)).toBe('waited 0.2 seconds');
    expect(waitBudget.spentMs).toBe(200);
    const started = Date.now();
    expect(await call(0.2)).toBe("error: refused: only 0.1 of this turn's 0.3 seconds of waiting are left; wait less or answer without waiting");
    expect(await call(0.1)).toBe('waited 0.1 seconds');
    expect(await call(0.1)).toBe('error: refused: this turn has used all of its 0.3 seconds of waiting; answer without waiting');
    expect(Date.now() - started).toBeLessThan(300);
  });

  it('returns the current time as an ISO timestamp', async () => {
    expect(Date.parse(await registry.call('current_time', '', context()))).not.toBeNaN();
  });
});
