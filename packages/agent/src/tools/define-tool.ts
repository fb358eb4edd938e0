import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { z } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';

export interface ToolContext {
  /** Aborted when the turn is interrupted or stopped; long tools must honour it. */
  signal: AbortSignal;
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

/** The OpenAI `tools` entry for a tool, its parameters generated from the zod schema. */
export function describeTool(tool: Tool): ChatCompletionFunctionTool {
  const { $schema: _ignored, ...parameters } = zodToJsonSchema(tool.schema, { target: 'openApi3' }) as Record<string, unknown>;
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters } };
}
