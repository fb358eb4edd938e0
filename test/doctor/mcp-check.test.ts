import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@switchboard/harness';
import { checkMcp } from '../../scripts/lib/doctor-mcp.ts';

// Issue 34, point 1: MCP_SERVERS "checked by `npm run doctor` (each server starts and lists its tools)".
const everythingEntry = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

function writeMcpFile(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'switchboard-mcp-doctor-')), 'mcp.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

/** Processes still running with `marker` in their environment: the doctor's children it failed to stop. */
function childrenWith(marker: string): string[] {
  return readdirSync('/proc').filter((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/environ`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  });
}

describe('the doctor’s mcp line', () => {
  it('is skipped without MCP_SERVERS', async () => {
    expect(await checkMcp({})).toEqual([{ name: 'mcp', status: 'skip', detail: 'off (no MCP_SERVERS): no MCP tool servers' }]);
  });

  it('starts server-everything over stdio, counts its tools offered and left out; a missing command and a silent server fail with the fix; every child is stopped', async () => {
    const marker = `doctor-probe-${process.pid}-${Date.now()}`;
    const path = writeMcpFile({
      mcpServers: {
        everything: { command: process.execPath, args: [everythingEntry, 'stdio'], env: { PROBE_SECRET: marker }, enabledByDefault: true },
        missing: { command: 'switchboard-no-such-mcp-server', env: { OTHER_SECRET: `${marker}-2` }, enabledByDefault: true },
        silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: { THIRD_SECRET: `${marker}-3` }, enabledByDefault: true },
        idle: { command: 'switchboard-never-started' },
      },
    });
    // A short limit so the server that never answers fails fast; the doctor's own is mcpStartTimeoutMs.
    const results = await checkMcp({ MCP_SERVERS: path }, 1500);
    expect(results.map((result) => [result.name, result.status])).toEqual([
      ['mcp', 'ok'],
      ['mcp (everything)', 'ok'],
      ['mcp (missing)', 'fail'],
      ['mcp (silent)', 'fail'],
    ]);
    expect(results[0]?.detail).toBe(`4 servers in ${path}, 1 not started (no enabledByDefault)`);
    // Every tool of server-everything has a name the model API takes; the ones not marked read-only ask first.
    expect(results[1]?.detail).toMatch(/^stdio: \d+ tools offered \([1-9]\d* asks? before each call\), 0 left out$/);
    expect(Number(/(\d+) tools offered/.exec(results[1]?.detail ?? '')?.[1])).toBeGreaterThan(0);
    expect(results[2]?.detail).toContain('ENOENT');
    expect(results[2]?.fix).toContain('check that "switchboard-no-such-mcp-server" runs and speaks MCP over stdio');
    expect(results[3]?.detail).toMatch(/timed out/i);
    expect(results[3]?.fix).toContain('(within 1.5 s)');
    expect(JSON.stringify(results)).not.toContain(marker);
    expect(childrenWith(marker)).toEqual([]);
  }, 30_000);

  it('names each bad entry of a bad file and fails', async () => {
    const path = writeMcpFile({ mcpServers: { both: { command: 'x', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer hidden-token' } }, none: {} } });
    const results = await checkMcp({ MCP_SERVERS: path });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ name: 'mcp', status: 'fail' });
    expect(results[0]?.detail).toBe(`MCP_SERVERS (${path}): server "both" has both "command" and "url"; give one; MCP_SERVERS (${path}): server "none" has neither "command" (stdio) nor "url" (Streamable HTTP)`);
    expect(results[0]?.fix).toContain('the worker refuses to start with it');
    expect(JSON.stringify(results)).not.toContain('hidden-token');
  });
});
