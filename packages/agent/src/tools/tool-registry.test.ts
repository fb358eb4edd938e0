import { describe, expect, it } from 'vitest';
import { builtinTools } from './builtin-tools.ts';
import { createToolRegistry } from './tool-registry.ts';

const registry = createToolRegistry(builtinTools);
const context = () => ({ signal: new AbortController().signal });

describe('createToolRegistry', () => {
  it('offers the contract tool names with JSON-schema parameters', () => {
    expect(registry.definitions.map((d) => d.function.name)).toEqual(['current_time', 'calculator', 'wait']);
    const calculator = registry.definitions.find((d) => d.function.name === 'calculator');
    expect(calculator?.function.parameters).toMatchObject({ type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] });
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

  it('returns the current time as an ISO timestamp', async () => {
    expect(Date.parse(await registry.call('current_time', '', context()))).not.toBeNaN();
  });
});
