/**
 * An MCP server as the worker runs it: the shape of packages/config's
 * McpServerEntry, restated here because a package reads no other's config
 * types (the agent depends on core only).
 */
export type McpServerSpec =
  | { kind: 'stdio'; name: string; command: string; args: string[]; env: Record<string, string>; enabledByDefault: boolean }
  | { kind: 'http'; name: string; url: string; headers: Record<string, string>; enabledByDefault: boolean };

/** Bounds on what a server the model reaches may take (HOUSE-STYLE: tools are bounded in time and output). */
export interface McpLimits {
  /** One tool call, from request to result; past it the call is cancelled and the server restarted. */
  callTimeoutMs: number;
  /** Starting a server and listing its tools. */
  startTimeoutMs: number;
  /** A result longer than this is cut, with a note the model reads. */
  maxResultChars: number;
  /** The first wait before a failed server is started again; doubled with each failure in a row, up to backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export const defaultMcpLimits: McpLimits = {
  callTimeoutMs: 30_000,
  startTimeoutMs: 30_000,
  maxResultChars: 20_000,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
};

/**
 * Why an MCP call gave no result. The tool registry turns it into the
 * `error: …` text the model reads; the turn and the process go on.
 */
export type McpCallErrorCode = 'MCP_UNAVAILABLE' | 'MCP_TIMEOUT' | 'MCP_SERVER_EXITED' | 'MCP_TOOL_FAILED' | 'MCP_UNKNOWN_TOOL' | 'MCP_NOT_APPROVED';

export class McpCallError extends Error {
  readonly code: McpCallErrorCode;
  constructor(code: McpCallErrorCode, message: string) {
    super(message);
    this.name = 'McpCallError';
    this.code = code;
  }
}
