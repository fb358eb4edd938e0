import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool as SdkTool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { ToolDefinition } from '../tools/define-tool.ts';
import { McpCallError, type McpLimits, type McpServerSpec } from './mcp-options.ts';
import { cutToolResult, mcpToolAsks, mcpToolName, renderMcpResult } from './mcp-tool-results.ts';

/** A tool of the server as the model is offered it. */
export interface McpOfferedTool {
  /** The server's own name for it. */
  tool: string;
  definition: ToolDefinition;
  /** Not plainly read-only: each call asks the chat first (the approval questions of Codex). */
  asks: boolean;
  /** The server says it is destructive: the question says so. */
  destructive: boolean;
}

/** One MCP server, shared by every conversation of this worker process: started once, restarted with backoff after a failure. */
export interface McpServerLink {
  readonly name: string;
  /** The tools last listed (kept while the server restarts), read at each turn. */
  readonly tools: readonly McpOfferedTool[];
  /** The server's names of the tools it listed but the model is not offered (a name the model API refuses). */
  readonly left: readonly string[];
  /** Connects and lists the tools; a failure is logged and retried in the background with backoff. */
  start(): Promise<void>;
  /** Connects and lists the tools once; a failure rejects with an McpCallError and is not retried (`npm run doctor`). */
  open(): Promise<void>;
  /** Calls one tool; every failure is an McpCallError with a code, its message for the model. */
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

export interface McpServerLinkOptions {
  server: McpServerSpec;
  limits: McpLimits;
  log: Logger;
}

/** The SDK, loaded on the first connect: a worker without MCP_SERVERS never loads it (test/e2e/production-build.e2e.test.ts). */
async function loadSdk() {
  const [client, stdio, http] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  return { Client: client.Client, StdioClientTransport: stdio.StdioClientTransport, StreamableHTTPClientTransport: http.StreamableHTTPClientTransport };
}

/** JSON-RPC codes the SDK's McpError carries for a request that timed out and a connection that closed under it. */
const requestTimeout = -32001;
const connectionClosed = -32000;
/** Past the SDK's own stdin-end, SIGTERM and SIGKILL steps (2 s each). */
const closeWaitMs = 6_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

interface LinkState {
  client?: Client;
  connecting?: Promise<Client>;
  failures: number;
  retryAt: number;
  retryTimer?: NodeJS.Timeout;
  home?: string;
  closed: boolean;
  tools: McpOfferedTool[];
  left: string[];
}

export function createMcpServerLink(options: McpServerLinkOptions): McpServerLink {
  const { server, limits, log } = options;
  const state: LinkState = { failures: 0, retryAt: 0, closed: false, tools: [], left: [] };
  const link = { server, limits, log, state };
  return {
    name: server.name,
    get tools() {
      return state.tools;
    },
    get left() {
      return state.left;
    },
    async start() {
      await ensureClient(link).catch((err: unknown) => {
        log.warn({ err, mcpServer: server.name }, 'MCP server did not start; retried in the background');
        scheduleRetry(link);
      });
    },
    open: () => ensureClient(link).then(() => undefined),
    call: (tool, args, signal) => callTool(link, { tool, args, signal }),
    async close() {
      state.closed = true;
      clearTimeout(state.retryTimer);
      const client = state.client ?? (await state.connecting?.catch(() => undefined));
      state.client = undefined;
      await client?.close().catch(() => undefined);
      if (state.home) await rm(state.home, { recursive: true, force: true });
    },
  };
}

interface Link {
  server: McpServerSpec;
  limits: McpLimits;
  log: Logger;
  state: LinkState;
}

/** The connected client, connecting first if none is; refused while a failed server waits out its backoff. */
async function ensureClient(link: Link): Promise<Client> {
  const { state, server } = link;
  if (state.client) return state.client;
  if (state.closed) throw new McpCallError('MCP_UNAVAILABLE', `MCP server "${server.name}" is shutting down`);
  const wait = state.retryAt - Date.now();
  if (!state.connecting && wait > 0) {
    throw new McpCallError('MCP_UNAVAILABLE', `MCP server "${server.name}" failed and is restarted in ${Math.ceil(wait / 1000)} s; try again later or answer without it`);
  }
  state.connecting ??= connect(link).finally(() => {
    state.connecting = undefined;
  });
  return state.connecting;
}

async function connect(link: Link): Promise<Client> {
  const { state, server, limits, log } = link;
  const sdk = await loadSdk();
  let client: Client | undefined;
  let closed: Promise<void> | undefined;
  try {
    const transport = await openTransport(link, sdk);
    client = new sdk.Client(
      { name: 'switchboard', version: '0.1.0' },
      // Re-listed by the SDK on notifications/tools/list_changed; the next turn offers what it found.
      { listChanged: { tools: { onChanged: (error, tools) => (error || !tools || state.client !== client ? undefined : offerTools(link, tools)) } } },
    );
    const own = client;
    closed = new Promise((resolve) => {
      own.onclose = () => {
        resolve();
        noteClosed(link, own);
      };
    });
    client.onerror = (err) => log.debug({ err, mcpServer: server.name }, 'MCP transport error');
    await client.connect(transport, { timeout: limits.startTimeoutMs });
    offerTools(link, await listAllTools(client, limits.startTimeoutMs));
  } catch (error) {
    await client?.close().catch(() => undefined);
    // A failed connect makes the SDK's Client close itself without waiting; its stdio transport then ends the
    // child 2-4 s later on unref'd timers, so a process that exits first (npm run doctor) would leave it running.
    if (closed) await Promise.race([closed, delay(closeWaitMs)]);
    noteFailure(link);
    throw new McpCallError('MCP_UNAVAILABLE', `MCP server "${server.name}" could not be started (${error instanceof Error ? error.message : String(error)})`);
  }
  state.failures = 0;
  state.retryAt = 0;
  state.client = client;
  log.info({ mcpServer: server.name, tools: state.tools.map((t) => t.tool) }, 'MCP server connected');
  return client;
}

async function openTransport(link: Link, sdk: Awaited<ReturnType<typeof loadSdk>>): Promise<Transport> {
  const { server, state, log } = link;
  if (server.kind === 'http') return new sdk.StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
  // Its own HOME, also its working directory: not the worker's directory, where a .env may sit.
  state.home ??= await mkdtemp(join(tmpdir(), `switchboard-mcp-${server.name}-`));
  const transport = new sdk.StdioClientTransport({ command: server.command, args: server.args, env: buildMcpChildEnv(process.env, state.home, server.env), cwd: state.home, stderr: 'pipe' });
  // Read, or a chatty server blocks once the pipe's buffer is full.
  transport.stderr?.on('data', (chunk: Buffer) => log.debug({ mcpServer: server.name, stderr: chunk.toString('utf8').slice(0, 2000) }, 'MCP server stderr'));
  return transport;
}

/**
 * The child's environment (docs/security.md): PATH, its own HOME and the
 * entry's `env`, never the worker's (DATABASE_URL, REDIS_URL, the bot and
 * admin tokens). The SDK adds LOGNAME, SHELL, TERM and USER of the worker
 * (its list after sudo's), which hold no secret; HOME and PATH here win.
 */
export function buildMcpChildEnv(source: Readonly<Record<string, string | undefined>>, home: string, own: Readonly<Record<string, string>>): Record<string, string> {
  return { PATH: source.PATH || '/usr/local/bin:/usr/bin:/bin', HOME: home, ...own };
}

async function listAllTools(client: Client, timeout: number): Promise<SdkTool[]> {
  const tools: SdkTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

function offerTools(link: Link, tools: readonly SdkTool[]): void {
  const { server, log, state } = link;
  const offered: McpOfferedTool[] = [];
  const left: string[] = [];
  for (const tool of tools) {
    const name = mcpToolName(server.name, tool.name);
    if (!name) left.push(tool.name);
    else {
      const definition = { name, description: tool.description ?? tool.title ?? tool.name, parameters: tool.inputSchema as Record<string, unknown> };
      offered.push({ tool: tool.name, definition, asks: mcpToolAsks(tool.annotations), destructive: tool.annotations?.destructiveHint === true });
    }
  }
  state.tools = offered;
  state.left = left;
  if (left.length > 0) log.info({ mcpServer: server.name, left }, 'MCP tools not offered: a name the model API refuses');
}

function noteClosed(link: Link, client: Client): void {
  if (link.state.client !== client) return;
  link.state.client = undefined;
  link.log.warn({ mcpServer: link.server.name }, 'MCP server connection closed; restarted on a later call');
  noteFailure(link);
}

/** Backoff doubles from backoffBaseMs to backoffMaxMs with each failure in a row. */
function noteFailure(link: Link): void {
  const { state, limits } = link;
  state.failures += 1;
  state.retryAt = Date.now() + Math.min(limits.backoffMaxMs, limits.backoffBaseMs * 2 ** (state.failures - 1));
}

/** A server that never listed its tools cannot be called back to life: it is retried on a timer instead. */
function scheduleRetry(link: Link): void {
  const { state } = link;
  if (state.closed || state.tools.length > 0) return;
  state.retryTimer = setTimeout(() => void retryLink(link), Math.max(0, state.retryAt - Date.now()));
  state.retryTimer.unref();
}

async function retryLink(link: Link): Promise<void> {
  await ensureClient(link).catch(() => scheduleRetry(link));
}

interface CallInput {
  tool: string;
  args: Record<string, unknown>;
  signal: AbortSignal;
}

async function callTool(link: Link, { tool, args, signal }: CallInput): Promise<string> {
  const { server, limits } = link;
  const client = await ensureClient(link);
  try {
    // The signal sends notifications/cancelled when the turn is stopped; so does the timeout.
    const result = await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: limits.callTimeoutMs });
    return cutToolResult(renderMcpResult(result as Parameters<typeof renderMcpResult>[0]), limits.maxResultChars);
  } catch (error) {
    if (signal.aborted) throw error;
    const code = (error as { code?: unknown }).code;
    if (code === requestTimeout) {
      // A server that hangs may hang for every caller: it is stopped and restarted on a later call.
      link.log.warn({ mcpServer: server.name, tool }, 'MCP call timed out; the server is restarted');
      await client.close().catch(() => undefined);
      throw new McpCallError('MCP_TIMEOUT', `MCP server "${server.name}" did not answer within ${limits.callTimeoutMs / 1000} s; the call was cancelled`);
    }
    if (code === connectionClosed || link.state.client !== client) {
      throw new McpCallError('MCP_SERVER_EXITED', `MCP server "${server.name}" stopped during the call; it is restarted on a later call`);
    }
    const message = error instanceof Error ? error.message : String(error);
    // Not the server's JSON-RPC answer but the way to it (an HTTP server gone, its session lost): connect afresh later.
    if (!(error instanceof Error && error.name === 'McpError')) {
      await client.close().catch(() => undefined);
      throw new McpCallError('MCP_UNAVAILABLE', `MCP server "${server.name}" could not be reached (${message}); it is reconnected on a later call`);
    }
    throw new McpCallError('MCP_TOOL_FAILED', message);
  }
}
