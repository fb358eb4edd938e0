import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool, type Tool } from './define-tool.ts';

export const currentTimeTool = defineTool({
  name: 'current_time',
  description: 'Returns the current date and time (ISO 8601, UTC).',
  schema: z.object({}).strict(),
  run: async () => new Date().toISOString(),
});

export const calculatorTool = defineTool({
  name: 'calculator',
  description:
    'Evaluates an arithmetic expression such as "(2 + 3) * 4 / 7", "sqrt(2)" or "5 km to m": numbers, operators, common math functions and unit conversion only.',
  schema: z.object({ expression: z.string().min(1).max(500) }).strict(),
  run: async ({ expression }) => {
    // Arithmetic only, checked against an allowlist, then evaluated in a worker thread with
    // time and memory limits (see calculator-pool.ts for why). Loaded on first use: mathjs
    // is large, and most workers never need it.
    const { calculate } = await import('./calculator.ts');
    return calculate(expression);
  },
});

export const waitTool = defineTool({
  name: 'wait',
  description: 'Waits the given number of seconds, then returns. Use only when asked to wait.',
  schema: z.object({ seconds: z.number().min(0).max(600) }).strict(),
  run: async ({ seconds }, { signal }) => {
    await sleep(seconds * 1000, undefined, { signal });
    return `waited ${seconds} seconds`;
  },
});

export const builtinTools: Tool[] = [currentTimeTool, calculatorTool, waitTool] as Tool[];
