import type { z } from 'zod';
import type { AskUser, ToolCaller } from '../agent-runtime.ts';

export type { ToolCaller };
import { zodToJsonSchema } from 'zod-to-json-schema';

export interface ToolContext {
  /** Aborted when the turn is interrupted, stopped or out of time; long tools must honour it. */
  signal: AbortSignal;
  /**
   * The turn's waiting budget, shared by every call of one turn: a tool that
   * waits takes what it waits from it (`wait`). The runtime makes one per
   * turn; without one, only a tool's own per-call limit applies.
   */
  waitBudget?: TurnWaitBudget;
  /** Who the call acts for: set by the worker on every turn, read by tools that keep something per conversation (`schedule`). */
  caller?: ToolCaller;
  /** Asks the chat to approve an action (the turn's approval questions); a tool with side effects asks before it acts. Absent: nobody can be asked. */
  askUser?: AskUser;
}


export interface TurnWaitBudget {
  readonly budgetMs: number;
  spentMs: number;
}

export interface Tool<S extends z.ZodTypeAny = z.ZodTypeAny> {
  name: string;
  description: string;
  schema: S;
  run(args: z.output<S>, context: ToolContext): Promise<string>;
}

export function defineTool<S extends z.ZodTypeAny>(tool: Tool<S>): Tool<S> {
  return tool;
}

/** What the model is told about a tool; a runtime puts it in its own wire shape. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** A tool's definition, its parameters generated from the zod schema. */
export function describeTool(tool: Tool): ToolDefinition {
  const { $schema: _ignored, ...parameters } = zodToJsonSchema(tool.schema, { target: 'openApi3' }) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, parameters };
}
