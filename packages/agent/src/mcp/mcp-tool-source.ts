import type { Logger } from 'pino';
import type { ToolContext, ToolDefinition } from '../tools/define-tool.ts';
import type { ToolSource } from '../tools/tool-registry.ts';
import { defaultMcpLimits, McpCallError, type McpLimits, type McpServerSpec } from './mcp-options.ts';
import { createMcpServerLink, type McpOfferedTool, type McpServerLink } from './mcp-server-link.ts';
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
  const approvals = createSessionApprovals();
  for (const server of options.servers) {
    if (server.enabledByDefault) links.set(server.name, createMcpServerLink({ server, limits, log: options.log }));
  }
  return {
    get definitions(): ToolDefinition[] {
      return [...links.values()].flatMap((link) => link.tools.map((t) => t.definition));
    },
    owns: (name) => name.includes(mcpNameSeparator) && links.has(name.slice(0, name.indexOf(mcpNameSeparator))),
    call: (name, args, context) => callMcpTool({ links, approvals }, { name, args, context }),
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

interface McpCallDeps {
  links: ReadonlyMap<string, McpServerLink>;
  approvals: SessionApprovals;
}

/**
 * Only a tool the server listed and we offered may be called: a name the
 * model made up reaches no server. A tool not plainly read-only runs only
 * once the chat approved it (docs/tools.md, "Approvals for tools").
 */
async function callMcpTool({ links, approvals }: McpCallDeps, { name, args, context }: McpToolCall): Promise<string> {
  const at = name.indexOf(mcpNameSeparator);
  const link = links.get(name.slice(0, at));
  const offered = link?.tools.find((t) => t.definition.name === name);
  if (!link || !offered) throw new McpCallError('MCP_UNKNOWN_TOOL', `unknown tool "${name}"`);
  if (offered.asks) await approveCall(approvals, { offered, args, context });
  return link.call(offered.tool, args, context.signal);
}

/** Tools approved "for the session", by conversation and tool, for as long as this worker runs (a restart asks again: fails closed). */
interface SessionApprovals {
  has(context: ToolContext, name: string): boolean;
  add(context: ToolContext, name: string): void;
}

function createSessionApprovals(): SessionApprovals {
  const approved = new Set<string>();
  const key = (context: ToolContext, name: string) => (context.caller ? `${context.caller.conversationId}:${name}` : undefined);
  return {
    has: (context, name) => approved.has(key(context, name) ?? ''),
    add: (context, name) => {
      const k = key(context, name);
      if (k) approved.add(k);
    },
  };
}

/** The question as the chat shows it: what would run, with what; the arguments cut so the question stays readable. */
async function approveCall(approvals: SessionApprovals, call: { offered: McpOfferedTool; args: Record<string, unknown>; context: ToolContext }): Promise<void> {
  const { offered, args, context } = call;
  const name = offered.definition.name;
  if (approvals.has(context, name)) return;
  if (!context.askUser) throw new McpCallError('MCP_NOT_APPROVED', `${name} changes things and needs the user's approval, which cannot be asked here; it was not run`);
  const detail = JSON.stringify(args);
  const answer = await context.askUser(
    { kind: 'other', summary: `use the tool ${name}${offered.destructive ? ' (it says it is destructive)' : ''}`, detail: detail.length > 1000 ? `${detail.slice(0, 999)}…` : detail },
    context.signal,
  );
  if (answer.decision === 'approved') return;
  if (answer.decision === 'approved_for_session') {
    approvals.add(context, name);
    return;
  }
  // A /stop or an interrupt while asking ends the turn; the registry rethrows once the signal is aborted.
  if (answer.decision === 'cancelled' && context.signal.aborted) throw new McpCallError('MCP_NOT_APPROVED', 'the turn was stopped while asking');
  throw new McpCallError('MCP_NOT_APPROVED', answer.decision === 'unanswered' ? `no one approved ${name} in time; it was not run` : `the user declined ${name}; it was not run`);
}
