import { pino } from 'pino';
import { createMcpServerLink, defaultMcpLimits } from '@switchboard/agent';
import { ConfigError, readMcpServersFile, type McpServerEntry } from '@switchboard/config';
import { readSetting, type CheckResult } from './doctor-checks.ts';

/** Starting one server and listing its tools; past it the server fails the doctor and is stopped. */
export const mcpStartTimeoutMs = 10_000;

const fix = 'fix MCP_SERVERS (docs/tools.md, "MCP tool servers")';

/**
 * MCP_SERVERS (issue 34, point 1): the file read with the parser the worker
 * uses, then each server with enabledByDefault started and its tools listed
 * through the worker's own link (same confined child environment, same
 * approval rule), all at once, each within mcpStartTimeoutMs, each stopped
 * before the doctor goes on. Names and counts only: never a header or env value.
 */
export async function checkMcp(env: NodeJS.ProcessEnv, startTimeoutMs = mcpStartTimeoutMs): Promise<CheckResult[]> {
  const path = readSetting(env, 'MCP_SERVERS');
  if (!path) return [{ name: 'mcp', status: 'skip', detail: 'off (no MCP_SERVERS): no MCP tool servers' }];
  let servers: McpServerEntry[];
  try {
    servers = readMcpServersFile(path);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return [{ name: 'mcp', status: 'fail', detail: error.message.replaceAll('Invalid configuration:', '').trim().split('\n').join('; '), fix: `${fix}; the worker refuses to start with it` }];
  }
  const started = servers.filter((server) => server.enabledByDefault);
  const idle = servers.length - started.length;
  const summary: CheckResult = {
    name: 'mcp',
    status: 'ok',
    detail: `${servers.length} server${servers.length === 1 ? '' : 's'} in ${path}${idle > 0 ? `, ${idle} not started (no enabledByDefault)` : ''}`,
  };
  return [summary, ...(await Promise.all(started.map((server) => probeMcpServer(server, startTimeoutMs))))];
}

/** One server started, its tools listed and the server stopped again, whatever happened. */
async function probeMcpServer(server: McpServerEntry, startTimeoutMs: number): Promise<CheckResult> {
  const name = `mcp (${server.name})`;
  const link = createMcpServerLink({ server, limits: { ...defaultMcpLimits, startTimeoutMs }, log: pino({ level: 'silent' }) });
  try {
    await link.open();
    const offered = link.tools.length;
    const asking = link.tools.filter((tool) => tool.asks).length;
    return { name, status: 'ok', detail: `${server.kind}: ${offered} tool${offered === 1 ? '' : 's'} offered (${asking} ask${asking === 1 ? 's' : ''} before each call), ${link.left.length} left out` };
  } catch (error) {
    const what = server.kind === 'stdio' ? `check that "${server.command}" runs and speaks MCP over stdio` : 'check that the URL answers MCP over Streamable HTTP and its headers';
    return { name, status: 'fail', detail: hideValues(server, (error as Error).message), fix: `${what} (within ${startTimeoutMs / 1000} s), or ${fix}` };
  } finally {
    await link.close();
  }
}

/** An error may quote what it was sent; the entry's header and env values are secrets (docs/tools.md). */
function hideValues(server: McpServerEntry, message: string): string {
  const values = Object.values(server.kind === 'stdio' ? server.env : server.headers).filter((value) => value.length > 0);
  return values.reduce((text, value) => text.replaceAll(value, '[hidden]'), message);
}
