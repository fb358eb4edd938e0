import type { Logger } from 'pino';
import type { ToolContext, ToolDefinition } from '../tools/define-tool.ts';
import type { ToolSource } from '../tools/tool-registry.ts';
import { defaultMcpLimits, McpCallError, type McpLimits, type McpServerSpec } from './mcp-options.ts';
import { createMcpServerLink, type McpServerLink } from './mcp-server-link.ts';
import { mcpNameSeparator } from './mcp-tool-results.ts';

/** The tools of MCP_SERVERS, as one source of the tool registry; started and closed with the worker. */
export interface McpToolSource extends ToolSource {
  /** Starts each enabled server and lists its tools; a server that fails is logged and retried, never fatal. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface McpToolSourceOptions {
  servers: readonly McpServerSpec[];
  log: Logger;
  limits?: Partial<McpLimits>;
}

/**
 * Only servers with `enabledByDefault` are started: choosing servers per
 * conversation (the admin API, the console) is not built yet, so a server
 * without it would serve no one (docs/tools.md, "MCP tool servers").
 */
export function createMcpToolSource(options: McpToolSourceOptions): McpToolSource {
  const limits = { ...defaultMcpLimits, ...options.limits };
  const links = new Map<string, McpServerLink>();
  for (const server of options.servers) {
    if (server.enabledByDefault) links.set(server.name, createMcpServerLink({ server, limits, log: options.log }));
  }
  return {
    get definitions(): ToolDefinition[] {
      return [...links.values()].flatMap((link) => link.tools.map((t) => t.definition));
    },
    owns: (name) => name.includes(mcpNameSeparator) && links.has(name.slice(0, name.indexOf(mcpNameSeparator))),
    call: (name, args, context) => callMcpTool(links, { name, args, context }),
    async start() {
      await Promise.all([...links.values()].map((link) => link.start()));
    },
    async close() {
      await Promise.all([...links.values()].map((link) => link.close()));
    },
  };
}

interface McpToolCall {
  name: string;
  args: Record<string, unknown>;
  context: ToolContext;
}

/** Only a tool the server listed and we offered may be called: a name the model made up reaches no server. */
async function callMcpTool(links: ReadonlyMap<string, McpServerLink>, { name, args, context }: McpToolCall): Promise<string> {
  const at = name.indexOf(mcpNameSeparator);
  const link = links.get(name.slice(0, at));
  const offered = link?.tools.find((t) => t.definition.name === name);
  if (!link || !offered) throw new McpCallError('MCP_UNKNOWN_TOOL', `unknown tool "${name}"`);
  return link.call(offered.tool, args, context.signal);
}
