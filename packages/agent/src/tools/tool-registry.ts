import { describeTool, type Tool, type ToolContext, type ToolDefinition } from './define-tool.ts';

export interface ToolRegistry {
  /** Read at each turn: a source's tools may change between turns (an MCP server's list). */
  readonly definitions: ToolDefinition[];
  /** Runs a tool call; every failure becomes the tool's result text, never a thrown error. */
  call(name: string, rawArguments: string, context: ToolContext): Promise<string>;
}

/**
 * Tools whose arguments are checked elsewhere (an MCP server validates its
 * own JSON schema), offered beside the built-in ones.
 */
export interface ToolSource {
  readonly definitions: ToolDefinition[];
  owns(name: string): boolean;
  /** Throws for every failure; the registry makes it the result text. */
  call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<string>;
}

export function createToolRegistry(tools: Tool[], sources: readonly ToolSource[] = []): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`tool ${tool.name} registered twice`);
    byName.set(tool.name, tool);
  }
  const definitions = tools.map(describeTool);
  return {
    get definitions() {
      return sources.length === 0 ? definitions : [...definitions, ...sources.flatMap((source) => source.definitions)];
    },
    async call(name, rawArguments, context) {
      const tool = byName.get(name);
      const source = tool ? undefined : sources.find((s) => s.owns(name));
      if (!tool && !source) return `error: unknown tool "${name}"`;
      let args: unknown;
      try {
        args = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
      } catch {
        return 'error: arguments are not valid JSON';
      }
      if (source) return callSource(source, { name, args, context });
      if (!tool) return `error: unknown tool "${name}"`;
      const parsed = tool.schema.safeParse(args);
      if (!parsed.success) {
        return `error: invalid arguments: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'} ${i.message}`).join('; ')}`;
      }
      try {
        return await tool.run(parsed.data, context);
      } catch (error) {
        if (context.signal.aborted) throw error;
        return `error: ${error instanceof Error ? error.message : String(error)}`;
      }
    },
  };
}

interface SourceCall {
  name: string;
  args: unknown;
  context: ToolContext;
}

async function callSource(source: ToolSource, { name, args, context }: SourceCall): Promise<string> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return 'error: invalid arguments: arguments must be a JSON object';
  try {
    return await source.call(name, args as Record<string, unknown>, context);
  } catch (error) {
    if (context.signal.aborted) throw error;
    return `error: ${error instanceof Error ? error.message : String(error)}`;
  }
}
