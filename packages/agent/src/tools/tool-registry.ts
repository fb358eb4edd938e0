import { describeTool, type Tool, type ToolContext, type ToolDefinition } from './define-tool.ts';

export interface ToolRegistry {
  definitions: ToolDefinition[];
  /** Runs a tool call; every failure becomes the tool's result text, never a thrown error. */
  call(name: string, rawArguments: string, context: ToolContext): Promise<string>;
}

export function createToolRegistry(tools: Tool[]): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`tool ${tool.name} registered twice`);
    byName.set(tool.name, tool);
  }
  const definitions = tools.map(describeTool);
  return {
    definitions,
    async call(name, rawArguments, context) {
      const tool = byName.get(name);
      if (!tool) return `error: unknown tool "${name}"`;
      let args: unknown;
      try {
        args = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
      } catch {
        return 'error: arguments are not valid JSON';
      }
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
