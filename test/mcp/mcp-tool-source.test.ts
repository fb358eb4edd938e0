import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMcpToolSource, createToolRegistry, type ApprovalAnswer, type ApprovalQuestion, type AskUser, type McpLimits, type McpServerSpec, type McpToolSource } from '@switchboard/agent';
import { getFreePort, repoRoot } from '@switchboard/harness';

// Real servers over stdio: @modelcontextprotocol/server-everything from npm,
// and a fixture on the SDK's own Server for the failures no npm server does on demand.
const everythingEntry = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const everything: McpServerSpec = {
  kind: 'stdio',
  name: 'everything',
  command: process.execPath,
  args: [everythingEntry, 'stdio'],
  env: { EVERYTHING_OWN: 'given by the entry' },
  enabledByDefault: true,
};
const fixture: McpServerSpec = { kind: 'stdio', name: 'fixture', command: process.execPath, args: [join(repoRoot, 'test/support/mcp-fixture-server.mjs')], env: {}, enabledByDefault: true };
const log = pino({ level: 'silent' });
const opened: McpToolSource[] = [];

async function open(servers: McpServerSpec[], limits: Partial<McpLimits> = {}) {
  const source = createMcpToolSource({ servers, log, limits });
  opened.push(source);
  await source.start();
  const registry = createToolRegistry([], [source]);
  const call = (name: string, args: unknown = {}, signal = new AbortController().signal) => registry.call(name, JSON.stringify(args), { signal });
  return { source, registry, call };
}

const children: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((source) => source.close()));
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** server-everything over Streamable HTTP on `port`, once it says it listens. */
async function startHttpEverything(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [everythingEntry, 'streamableHttp'], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let said = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8');
      if (said.includes('listening on port')) resolve();
    });
    child.once('exit', () => reject(new Error(`server-everything exited: ${said}`)));
  });
  return child;
}

describe('MCP tool servers over stdio', () => {
  it('offers the tools of server-everything as <server>__<tool> with their JSON schemas, and calls them', async () => {
    const { registry, call } = await open([everything]);
    const names = registry.definitions.map((d) => d.name);
    expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-env', 'everything__get-sum']));
    // Not marked read-only: offered, but with nobody to ask it does not run (fail closed); a made-up name reaches no server.
    expect(names).toContain('everything__toggle-simulated-logging');
    expect(await call('everything__toggle-simulated-logging')).toBe(
      "error: everything__toggle-simulated-logging changes things and needs the user's approval, which cannot be asked here; it was not run",
    );
    expect(await call('everything__made-up')).toBe('error: unknown tool "everything__made-up"');
    expect(registry.definitions.find((d) => d.name === 'everything__echo')?.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
    expect(await call('everything__echo', { message: 'hello' })).toBe('Echo: hello');
    expect(await call('everything__echo', [1])).toBe('error: invalid arguments: arguments must be a JSON object');
  });

  it("gives the child PATH, a private HOME and the entry's env, never the worker's secrets", async () => {
    const secrets = { DATABASE_URL: 'postgres://u:db-secret@h/db', REDIS_URL: 'redis://:redis-secret@h', TELEGRAM_BOT_TOKEN: '1:tg-secret', ADMIN_TOKEN: 'admin-secret-0123456789', MODEL_API_KEY: 'sk-model-secret' };
    for (const [name, value] of Object.entries(secrets)) vi.stubEnv(name, value);
    try {
      const { call } = await open([everything]);
      const text = await call('everything__get-env');
      const env = JSON.parse(text) as Record<string, string>;
      for (const value of Object.values(secrets)) expect(text).not.toContain(value);
      // The SDK adds LOGNAME, SHELL, TERM and USER (sudo's list); none holds a secret.
      expect(Object.keys(env).every((name) => ['PATH', 'HOME', 'EVERYTHING_OWN', 'LOGNAME', 'SHELL', 'TERM', 'USER'].includes(name))).toBe(true);
      expect(env.EVERYTHING_OWN).toBe('given by the entry');
      expect(env.HOME).toMatch(/switchboard-mcp-everything-/);
      expect(env.HOME).not.toBe(process.env.HOME);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('asks before each call of a tool not marked read-only or marked destructive: approved it runs, otherwise the model reads why not', async () => {
    const { registry } = await open([fixture]);
    expect(registry.definitions.map((d) => d.name).sort()).toEqual(['fixture__big', 'fixture__crash', 'fixture__grow', 'fixture__hang', 'fixture__pid', 'fixture__wipe', 'fixture__write']);
    const asked: ApprovalQuestion[] = [];
    const answering = (decision: ApprovalAnswer['decision']): AskUser => async (question) => {
      asked.push(question);
      return { decision } as ApprovalAnswer;
    };
    const caller = { conversationId: 7, userKey: 'telegram:bot:1', userId: '1', turnKey: '7:1' };
    const signal = new AbortController().signal;
    const run = (name: string, decision: ApprovalAnswer['decision'], conversationId = 7) =>
      registry.call(name, JSON.stringify({ path: 'a.txt' }), { signal, askUser: answering(decision), caller: { ...caller, conversationId } });
    expect(await run('fixture__pid', 'denied')).toMatch(/^\d+$/);
    expect(asked).toEqual([]);
    expect(await run('fixture__write', 'approved')).toBe('ran write');
    expect(asked).toEqual([{ kind: 'other', summary: 'use the tool fixture__write', detail: '{"path":"a.txt"}' }]);
    expect(await run('fixture__wipe', 'denied')).toBe('error: the user declined fixture__wipe; it was not run');
    expect(asked[1]?.summary).toBe('use the tool fixture__wipe (it says it is destructive)');
    expect(await run('fixture__wipe', 'unanswered')).toBe('error: no one approved fixture__wipe in time; it was not run');
    // Approved for the session: that tool in that conversation runs unasked from then on; another conversation is asked.
    expect(await run('fixture__write', 'approved_for_session')).toBe('ran write');
    const before = asked.length;
    expect(await run('fixture__write', 'denied')).toBe('ran write');
    expect(asked).toHaveLength(before);
    expect(await run('fixture__write', 'denied', 8)).toBe('error: the user declined fixture__write; it was not run');
  });

  it('fails only the call when the server exits during it, then restarts it after the backoff', async () => {
    const { call } = await open([fixture], { backoffBaseMs: 200 });
    const firstPid = await call('fixture__pid');
    expect(await call('fixture__crash')).toBe('error: MCP server "fixture" stopped during the call; it is restarted on a later call');
    expect(await call('fixture__pid')).toMatch(/^error: MCP server "fixture" failed and is restarted in 1 s/);
    await vi.waitFor(async () => expect(await call('fixture__pid')).toMatch(/^\d+$/), { timeout: 5_000, interval: 100 });
    expect(await call('fixture__pid')).not.toBe(firstPid);
  });

  it('cancels a call that hangs past the timeout, and one whose turn is stopped', async () => {
    const { call } = await open([fixture], { callTimeoutMs: 300, backoffBaseMs: 1 });
    const started = Date.now();
    expect(await call('fixture__hang')).toBe('error: MCP server "fixture" did not answer within 0.3 s; the call was cancelled');
    expect(Date.now() - started).toBeLessThan(3_000);
    await vi.waitFor(async () => expect(await call('fixture__pid')).toMatch(/^\d+$/), { timeout: 5_000, interval: 50 });

    const turn = new AbortController();
    const pending = call('fixture__hang', {}, turn.signal);
    turn.abort();
    await expect(pending).rejects.toThrow();
    expect(await call('fixture__pid')).toMatch(/^\d+$/);
  });

  it('cuts a large result with a note the model reads', async () => {
    const { call } = await open([fixture], { maxResultChars: 1_000 });
    const text = await call('fixture__big', { size: 5_000 });
    expect(text).toBe(`${'x'.repeat(1_000)}\n[cut: the tool returned 5000 characters; only the first 1000 are shown]`);
  });

  it('offers a tool the server adds after notifications/tools/list_changed', async () => {
    const { registry, call } = await open([fixture]);
    expect(registry.definitions.map((d) => d.name)).not.toContain('fixture__later');
    expect(await call('fixture__grow')).toBe('grown');
    await vi.waitFor(() => expect(registry.definitions.map((d) => d.name)).toContain('fixture__later'), { timeout: 5_000, interval: 50 });
    expect(await call('fixture__later')).toBe('ran later');
  });

  it('starts no server without enabledByDefault, and keeps going when one cannot start', async () => {
    const { registry, call } = await open([{ ...fixture, enabledByDefault: false }, { ...fixture, name: 'missing', command: '/nonexistent/mcp-server' }]);
    expect(registry.definitions).toEqual([]);
    expect(await call('fixture__pid')).toBe('error: unknown tool "fixture__pid"');
  });
});

describe('MCP tool servers over Streamable HTTP', () => {
  it('calls server-everything over HTTP, answers an error while it is gone, and reconnects once it is back', async () => {
    const port = await getFreePort();
    const server = await startHttpEverything(port);
    const http: McpServerSpec = { kind: 'http', name: 'remote', url: `http://127.0.0.1:${port}/mcp`, headers: { 'x-switchboard-test': 'yes' }, enabledByDefault: true };
    const { registry, call } = await open([http], { backoffBaseMs: 50 });
    expect(registry.definitions.map((d) => d.name)).toContain('remote__echo');
    expect(await call('remote__echo', { message: 'over http' })).toBe('Echo: over http');

    server.kill('SIGKILL');
    await once(server, 'exit');
    expect(await call('remote__echo', { message: 'gone' })).toMatch(/^error: MCP server "remote" (could not be reached|stopped during the call)/);
    await startHttpEverything(port);
    await vi.waitFor(async () => expect(await call('remote__echo', { message: 'back' })).toBe('Echo: back'), { timeout: 5_000, interval: 100 });
  });

  it("sends the entry's headers with its requests", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const recorder = createServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(503).end();
    });
    recorder.listen(0, '127.0.0.1');
    await once(recorder, 'listening');
    try {
      const port = (recorder.address() as AddressInfo).port;
      await open([{ kind: 'http', name: 'recorded', url: `http://127.0.0.1:${port}/mcp`, headers: { authorization: 'Bearer for-the-server' }, enabledByDefault: true }]);
      expect(seen[0]?.authorization).toBe('Bearer for-the-server');
    } finally {
      recorder.close();
    }
  });
});
