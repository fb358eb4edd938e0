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
  description: 'Evaluates an arithmetic expression such as "(2 + 3) * 4 / 7" or "sqrt(2)".',
  schema: z.object({ expression: z.string().min(1).max(500) }).strict(),
  run: async ({ expression }) => {
    // mathjs parses into its own AST and evaluates without JavaScript's eval,
    // which is the safe way to run an expression a model wrote. Loaded on first
    // use: it is large, and most workers never need it.
    const { evaluate } = await import('mathjs');
    const value: unknown = evaluate(expression);
    if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
    if (value && typeof value === 'object' && 'toString' in value) return String(value);
    throw new Error('expression did not produce a value');
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
