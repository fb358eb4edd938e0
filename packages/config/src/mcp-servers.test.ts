import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './load-config.ts';
import { parseMcpServers, readMcpServersFile } from './mcp-servers.ts';

const parse = (servers: Record<string, unknown>) => parseMcpServers(JSON.stringify({ mcpServers: servers }));

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    return (error as ConfigError).message.split('\n').slice(1);
  }
  throw new Error('expected a ConfigError');
}

describe(parseMcpServers.name, () => {
  it('reads stdio and Streamable HTTP entries, with their defaults', () => {
    expect(
      parse({
        everything: { command: 'npx', args: ['-y', 'server'], env: { A: '1' }, enabledByDefault: true },
        remote: { url: 'https://mcp.example/mcp', headers: { authorization: 'Bearer x' } },
        bare: { command: 'mcp-bare' },
      }),
    ).toEqual([
      { kind: 'stdio', name: 'everything', command: 'npx', args: ['-y', 'server'], env: { A: '1' }, enabledByDefault: true },
      { kind: 'http', name: 'remote', url: 'https://mcp.example/mcp', headers: { authorization: 'Bearer x' }, enabledByDefault: false },
      { kind: 'stdio', name: 'bare', command: 'mcp-bare', args: [], env: {}, enabledByDefault: false },
    ]);
  });

  it('names every bad entry on a line of its own, and keeps the good ones out of the message', () => {
    const problems = problemsOf(() =>
      parse({
        good: { command: 'ok' },
        both: { command: 'x', url: 'https://a.example' },
        neither: { enabledByDefault: true },
        'bad__name': { command: 'x' },
        typo: { command: 'x', enabled: true },
        ftp: { url: 'ftp://a.example' },
        mixed: { url: 'https://a.example', env: { A: '1' } },
        empty: { command: '  ' },
        args: { command: 'x', args: 'not-a-list' },
        list: ['not', 'an', 'object'],
      }),
    );
    expect(problems).toEqual([
      'MCP_SERVERS: server "both" has both "command" and "url"; give one',
      'MCP_SERVERS: server "neither" has neither "command" (stdio) nor "url" (Streamable HTTP)',
      'MCP_SERVERS: server "bad__name" has a name that is not 1-32 letters, digits, "-" or single "_"',
      'MCP_SERVERS: server "typo" has unknown field "enabled"',
      'MCP_SERVERS: server "ftp" "url" must be an http or https URL',
      'MCP_SERVERS: server "mixed" has "args" or "env", which only a "command" server takes',
      'MCP_SERVERS: server "empty" "command" must not be empty',
      'MCP_SERVERS: server "args" "args" Expected array, received string',
      'MCP_SERVERS: server "list" Expected object, received array',
    ]);
  });

  it('refuses a file that is not JSON or not in the mcpServers shape, in one line', () => {
    expect(() => parseMcpServers('{nope')).toThrow(/^Invalid configuration: MCP_SERVERS is not valid JSON/);
    expect(() => parseMcpServers(JSON.stringify({ servers: {} }))).toThrow(/must be an object \{"mcpServers"/);
  });
});

describe(readMcpServersFile.name, () => {
  it('names the path of a file it cannot read, and the path in each bad entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-servers-'));
    expect(() => readMcpServersFile(join(dir, 'missing.json'))).toThrow(/MCP_SERVERS names ".*missing\.json", which cannot be read \(ENOENT\)/);
    const file = join(dir, 'servers.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { one: {} } }));
    expect(problemsOf(() => readMcpServersFile(file))).toEqual([`MCP_SERVERS (${file}): server "one" has neither "command" (stdio) nor "url" (Streamable HTTP)`]);
  });
});
