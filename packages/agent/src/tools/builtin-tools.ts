import { setTimeout as sleep } from 'node:timers/promises';
import { decideWait } from '@switchboard/core';
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

/** The per-call limit of `wait` when none is configured (the worker passes TOOL_WAIT_MAX_SECONDS). */
export const defaultWaitMaxSeconds = 60;

/**
 * `wait`, limited (issue 17, defect 3): its schema's maximum is the per-call
 * limit, so the model sees it and a longer request is refused by validation
 * as a tool error; the turn's waiting budget (ToolContext.waitBudget) is
 * checked and taken before the sleep. The sleep ends with the turn's signal
 * (/stop, interrupt, lease loss, shutdown, the turn's timeout).
 */
export function createWaitTool(maxSeconds = defaultWaitMaxSeconds) {
  return defineTool({
    name: 'wait',
    description: `Waits the given number of seconds (at most ${maxSeconds}), then returns. Use only when asked to wait.`,
    schema: z.object({ seconds: z.number().min(0).max(maxSeconds, `at most ${maxSeconds} seconds per call`) }).strict(),
    run: async ({ seconds }, { signal, waitBudget }) => {
      const decision = decideWait(seconds, { maxSecondsPerCall: maxSeconds, budgetMs: waitBudget?.budgetMs ?? Number.POSITIVE_INFINITY, spentMs: waitBudget?.spentMs ?? 0 });
      if (decision.kind === 'refused') throw new Error(decision.message);
      // Taken before the sleep: a wait cut short still counts, so stopping and asking again gains nothing.
      if (waitBudget) waitBudget.spentMs += decision.ms;
      await sleep(decision.ms, undefined, { signal });
      return `waited ${seconds} seconds`;
    },
  });
}

export interface BuiltinToolOptions {
  /** The most one `wait` call may wait (TOOL_WAIT_MAX_SECONDS). */
  waitMaxSeconds?: number;
}

export function createBuiltinTools(options: BuiltinToolOptions = {}): Tool[] {
  return [currentTimeTool, calculatorTool, createWaitTool(options.waitMaxSeconds)] as Tool[];
}

export const builtinTools: Tool[] = createBuiltinTools();
