import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createScratchDir, repoRoot, type ManagedProcess } from '@switchboard/harness';
import { botToken, TestSystem } from '../support/system.ts';

// Issue 34, point 1: a chat user reaches MCP servers through the model's tool
// calls. A real worker process starts the real server-everything over stdio
// (and a fixture on the SDK's Server that exits mid-call) from MCP_SERVERS.
const modelKey = 'sk-mcp-e2e-model-secret';

function writeServersFile(): string {
  const file = join(createScratchDir('mcp-servers'), 'mcp-servers.json');
  const node = process.execPath;
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        everything: { command: node, args: [join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'], env: { SERVER_OWN: 'own value' }, enabledByDefault: true },
        fixture: { command: node, args: [join(repoRoot, 'test/support/mcp-fixture-server.mjs')], enabledByDefault: true },
        unused: { command: node, args: [join(repoRoot, 'test/support/mcp-fixture-server.mjs')] },
      },
    }),
  );
  return file;
}

/** Pids of the live processes whose parent is `parent` (read from /proc). */
function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] === String(parent);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Running, not a zombie waiting for whoever adopted it to reap it. */
function isAlive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

interface ModelRequest {
  body: { tools?: { function: { name: string } }[] };
}

describe('MCP tool servers through the real route', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workerProcesses: true, workerEnv: { MCP_SERVERS: writeServersFile(), MODEL_API_KEY: modelKey } });
    await system.setModelScript({
      rules: [
        { match: 'echo this', firstStep: true, times: 1, toolCalls: [{ name: 'everything__echo', arguments: { message: 'through MCP' } }] },
        { match: 'echo this', reply: 'the tool said: {{tool_result}}' },
        { match: 'show the env', firstStep: true, times: 1, toolCalls: [{ name: 'everything__get-env', arguments: {} }] },
        { match: 'show the env', reply: '{{tool_result}}' },
        { match: 'crash it', firstStep: true, times: 1, toolCalls: [{ name: 'fixture__crash', arguments: {} }] },
        { match: 'crash it', reply: 'after the crash: {{tool_result}}' },
        { match: 'echo once more', firstStep: true, times: 1, toolCalls: [{ name: 'everything__echo', arguments: { message: 'still here' } }] },
        { match: 'echo once more', reply: 'the tool said: {{tool_result}}' },
        { match: 'write it', firstStep: true, times: 1, toolCalls: [{ name: 'fixture__write', arguments: { path: 'notes.txt' } }] },
        { match: 'write it', reply: 'after write: {{tool_result}}' },
        { match: 'wipe it', firstStep: true, times: 1, toolCalls: [{ name: 'fixture__wipe', arguments: {} }] },
        { match: 'wipe it', reply: 'after wipe: {{tool_result}}' },
      ],
    });
  });
  afterAll(async () => {
    await system?.close();
  });

  async function toolResults(chatId: number): Promise<{ tool_name: string; content: string }[]> {
    return system.sql<{ tool_name: string; content: string }[]>`
      select m.tool_name, m.content from messages m
      join conversations c on c.current_session_id = m.session_id
      where c.chat_id = ${String(chatId)} and m.role = 'tool' order by m.seq`;
  }

  it("offers the tools of enabled servers, and the model's call of everything__echo reaches the chat", async () => {
    const chatId = 3401;
    await system.sendTelegram({ chatId, text: 'please echo this' });
    const [reply] = await system.waitForTelegram(chatId, 1, 20_000);
    expect(reply?.text).toBe('the tool said: Echo: through MCP');
    expect(await toolResults(chatId)).toEqual([{ tool_name: 'everything__echo', content: 'Echo: through MCP' }]);

    const requests = (await (await fetch(`${system.simUrl}/control/model/requests`)).json()) as ModelRequest[];
    const offered = requests[0]?.body.tools?.map((t) => t.function.name) ?? [];
    // Tools with side effects are offered too: calling them asks first (the next test); a server without enabledByDefault: not started.
    expect(offered).toEqual(expect.arrayContaining(['current_time', 'calculator', 'wait', 'everything__echo', 'everything__get-env', 'fixture__crash', 'fixture__write', 'fixture__wipe']));
    expect(offered.some((name) => name.startsWith('unused__'))).toBe(false);
  });

  it('asks in chat before a tool that is not read-only runs: approved, it runs; denied, the model reads that it did not', async () => {
    const chatId = 3404;
    await system.sendTelegram({ chatId, text: 'write it' });
    const [question] = await system.waitForTelegram(chatId, 1, 20_000);
    expect(question?.text).toContain('use the tool fixture__write');
    expect(question?.text).toContain('notes.txt');
    expect(await toolResults(chatId)).toEqual([]);
    await system.sendTelegram({ chatId, text: '/approve' });
    // The answer is acknowledged ("Approved by …"), then the turn goes on with the tool's result.
    const replies = await system.waitForTelegram(chatId, 3, 20_000);
    expect(replies.map((r) => r.text).slice(1).sort()).toEqual([`Approved by ${chatId}.`, 'after write: ran write'].sort());
    expect(await toolResults(chatId)).toEqual([{ tool_name: 'fixture__write', content: 'ran write' }]);

    const other = 3405;
    await system.sendTelegram({ chatId: other, text: 'wipe it' });
    const [destructive] = await system.waitForTelegram(other, 1, 20_000);
    expect(destructive?.text).toContain('use the tool fixture__wipe (it says it is destructive)');
    await system.sendTelegram({ chatId: other, text: '/deny' });
    const denied = await system.waitForTelegram(other, 3, 20_000);
    expect(denied.map((r) => r.text)).toContain('after wipe: error: the user declined fixture__wipe; it was not run');
    const [row] = await system.sql<{ status: string; summary: string }[]>`
      select a.status, a.summary from approvals a join conversations c on c.id = a.conversation_id where c.chat_id = ${String(other)}`;
    expect(row).toEqual({ status: 'denied', summary: 'use the tool fixture__wipe (it says it is destructive)' });
  });

  it("gives the stdio child none of the worker's secrets", async () => {
    const chatId = 3402;
    await system.sendTelegram({ chatId, text: 'show the env' });
    await system.waitForTelegram(chatId, 1, 20_000);
    const [result] = await toolResults(chatId);
    const env = JSON.parse(result?.content ?? '{}') as Record<string, string>;
    for (const secret of [system.databaseUrl, botToken, 'test-secret', modelKey, 'redis://']) expect(result?.content).not.toContain(secret);
    expect(Object.keys(env).filter((name) => !['PATH', 'HOME', 'SERVER_OWN', 'LOGNAME', 'SHELL', 'TERM', 'USER'].includes(name))).toEqual([]);
    expect(env.SERVER_OWN).toBe('own value');
    expect(env.HOME).toMatch(/switchboard-mcp-everything-/);
  });

  it('fails only the call when its server exits during it: the turn answers, and so does the next one', async () => {
    const chatId = 3403;
    await system.sendTelegram({ chatId, text: 'crash it' });
    const [reply] = await system.waitForTelegram(chatId, 1, 20_000);
    expect(reply?.text).toBe('after the crash: error: MCP server "fixture" stopped during the call; it is restarted on a later call');
    // The worker goes on, and so do the other servers.
    await system.sendTelegram({ chatId, text: 'echo once more' });
    const replies = await system.waitForTelegram(chatId, 2, 20_000);
    expect(replies[1]?.text).toBe('the tool said: Echo: still here');
  });

  // Last: it kills the worker. The SDK's servers exit when their stdin closes, which the worker's death does.
  it('leaves no stdio server behind when the worker is killed with SIGKILL', async () => {
    const worker = system.workers[0] as ManagedProcess;
    const servers = childrenOf(worker.child.pid!).filter((pid) => /server-everything|mcp-fixture-server/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')));
    // server-everything at least; the fixture too unless it is still waiting out its backoff after the crash above.
    expect(servers.length).toBeGreaterThanOrEqual(1);
    await worker.stop('SIGKILL');
    await vi.waitFor(() => expect(servers.filter(isAlive)).toEqual([]), { timeout: 10_000, interval: 100 });
  });
});
