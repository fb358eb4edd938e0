import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { repoRoot, type ManagedProcess } from '@switchboard/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childUserSetting, codexSetup, type CodexSetup } from '../support/codex-system.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

// Issue 30, finding 1: a chat user of a Codex conversation has Codex run a command that reads what the worker holds.
// Through a real worker process, the fake app-server as its child, and the fake's `sh:` script, which runs the command
// for real with /bin/sh in the thread's cwd, as Codex would (CODEX_AUTO_APPROVE: the attacker is the asked user anyway).
// Each attack worked before the child ran in bubblewrap: CODEX_SANDBOX_E2E=off runs this file with CODEX_SANDBOX=off,
// and every "cannot" test then fails (docs/codex.md, "How a child is confined").

const sandbox = process.env.CODEX_SANDBOX_E2E === 'off' ? 'off' : 'bwrap';

function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

async function conversationIdOf(system: TestSystem, chatId: number): Promise<number> {
  const [row] = await system.sql<{ id: string }[]>`select id from conversations where chat_id = ${String(chatId)}`;
  return Number(row?.id);
}

describe(`a Codex child’s confinement (CODEX_SANDBOX=${sandbox}), through a worker process`, () => {
  let system: TestSystem;
  let setup: CodexSetup;
  let workerHome: string;
  const homeSecret = `home-secret-${randomUUID()}`;
  const sessionSecret = `operator-session-${randomUUID()}`;
  let provider: Server;

  /** What the child printed for `sh: <command>`: the fake's reply is "codex: ran <command> (exit N)", then the output. */
  async function run(chatId: number, command: string, count: number): Promise<{ exit: number; output: string }> {
    await system.sendTelegram({ chatId, text: `sh: ${command}` });
    const reply = (await system.waitForTelegram(chatId, count)).at(-1)?.text ?? '';
    const head = `codex: ran ${command} (exit `;
    expect(reply.startsWith(head), reply).toBe(true);
    const exit = Number(reply.slice(head.length, reply.indexOf(')', head.length)));
    return { exit, output: reply.slice(reply.indexOf('\n', head.length) + 1) };
  }

  beforeAll(async () => {
    setup = codexSetup({ CODEX_AUTO_APPROVE: 'on', CODEX_SANDBOX: sandbox, CODEX_SANDBOX_NETWORK: process.env.CODEX_SANDBOX_NETWORK_E2E === 'shared' ? 'shared' : 'provider' });
    // The worker's own HOME, with the operator's Codex home in it: a file of the operator's and Codex's own transcripts.
    workerHome = join(setup.dir, 'worker-home');
    mkdirSync(join(workerHome, '.codex', 'sessions'), { recursive: true });
    writeFileSync(join(workerHome, 'secret.txt'), homeSecret);
    // The operator's model provider: the one destination a child may reach (CODEX_SANDBOX_NETWORK=provider).
    provider = createServer((_req, res) => res.end('provider answered'));
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    writeFileSync(join(workerHome, '.codex', 'config.toml'), `model_provider = "corp"\n[model_providers.corp]\nbase_url = "http://127.0.0.1:${portOf(provider)}/v1"\n`);
    copyFileSync(join(repoRoot, 'test/support/net-probe.mjs'), join(setup.dir, 'bin', 'net-probe.mjs'));
    writeFileSync(join(workerHome, '.codex', 'sessions', 'rollout-operator.jsonl'), sessionSecret);
    system = await TestSystem.start({ workerProcesses: true, workerEnv: { ...setup.workerEnv, HOME: workerHome, CODEX_HOME: join(workerHome, '.codex') } });
  });
  afterAll(async () => {
    await system?.close();
    provider?.close();
    setup?.cleanup();
  });

  it('works in its own workspace, home and TMPDIR', async () => {
    const { exit, output } = await run(7201, 'echo kept > note.txt && cat note.txt && echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && pwd', 1);
    const workspace = join(setup.workerEnv.CODEX_WORKSPACES, String(await conversationIdOf(system, 7201)));
    expect({ exit, output: output.trim() }).toEqual({ exit: 0, output: `kept\nt\n${workspace}` });
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('kept\n');
  });

  it('cannot read the worker’s environment: the worker’s pid is not in its /proc, and no process there holds DATABASE_URL', async () => {
    const workerPid = (system.workers[0] as ManagedProcess).child.pid as number;
    const { output } = await run(7202, `tr '\\0' '\\n' < /proc/${workerPid}/environ | grep -E '^(DATABASE_URL|ADMIN_TOKEN|TELEGRAM_BOT_TOKEN)='; cat /proc/[0-9]*/environ | tr '\\0' '\\n' | grep -c '^DATABASE_URL='`, 1);
    expect(output).not.toContain(system.databaseUrl);
    expect(output).not.toContain('DATABASE_URL=');
    expect(output).toContain(`/proc/${workerPid}/environ: No such file`);
    // The count of environments in its /proc holding DATABASE_URL.
    expect(output.split('\n')).toContain('0');
  });

  it('cannot read another conversation’s workspace or home, nor see that they exist', async () => {
    const secret = `workspace-secret-${randomUUID()}`;
    await run(7203, `echo ${secret} > mine.txt`, 1);
    const other = await conversationIdOf(system, 7203);
    await system.sendTelegram({ chatId: 7204, text: 'hello' });
    await system.waitForTelegram(7204, 1);
    const self = await conversationIdOf(system, 7204);
    const { CODEX_WORKSPACES: workspaces, CODEX_HOMES: homes } = setup.workerEnv;
    const { output } = await run(7204, `cat ${workspaces}/${other}/mine.txt; cat ${homes}/${other}/.codex/config.toml; ls ${workspaces} ${homes}`, 2);
    expect(output).not.toContain(secret);
    expect(output).not.toContain('model_provider');
    expect(output).toContain(`${workspaces}/${other}/mine.txt: No such file or directory`);
    // Each root shows this conversation's own directory only.
    expect(output).toContain(`${workspaces}:\n${self}\n`);
    expect(output).toContain(`${homes}:\n${self}\n`);
  });

  it('cannot read the worker’s HOME nor the operator’s ~/.codex', async () => {
    const { output } = await run(7205, `cat ${workerHome}/secret.txt ${workerHome}/.codex/sessions/rollout-operator.jsonl; ls -a ${workerHome}`, 1);
    expect(output).not.toContain(homeSecret);
    expect(output).not.toContain(sessionSecret);
    expect(output).toContain(`${workerHome}/secret.txt: No such file or directory`);
  });

  it('cannot write outside its workspace and home: not the code it runs from, and what it writes elsewhere never reaches the machine', async () => {
    const source = join(repoRoot, 'apps/sim/src/codex/sandbox-probe.txt');
    const readOnly = await run(7206, `touch ${source} && rm ${source}`, 1);
    expect(readOnly.exit).not.toBe(0);
    expect(readOnly.output).toContain('Read-only file system');
    // The sandbox's /tmp is its own: a write there succeeds inside and is gone with the child.
    const escaped = join(setup.dir, 'escaped.txt');
    await run(7206, `touch ${escaped}`, 2);
    expect(existsSync(escaped), 'a file written outside the workspace reached the machine').toBe(false);
  });

  it.runIf(process.getuid?.() === 0 && childUserSetting().CODEX_SANDBOX_USER === undefined)('runs as a uid of its own per conversation when the worker runs as root, owning its workspace and home', async () => {
    const [first, second] = [7208, 7209];
    const ids = await Promise.all([first, second].map(async (chatId) => {
      const { output } = await run(chatId, 'id -u; id -g; id -G', 1);
      return { chatId, printed: output.trim().split('\n'), conversation: await conversationIdOf(system, chatId) };
    }));
    for (const { printed, conversation } of ids) {
      const uid = 2_000_000_000 + conversation;
      expect(printed).toEqual([String(uid), String(uid), String(uid)]);
      expect(statSync(join(setup.workerEnv.CODEX_WORKSPACES, String(conversation))).uid).toBe(uid);
      expect(statSync(join(setup.workerEnv.CODEX_HOMES, String(conversation), '.codex')).uid).toBe(uid);
    }
    expect(ids[0]?.printed[0]).not.toBe(ids[1]?.printed[0]);
  });

  it('cannot reach Postgres, Redis, the gateway nor the platform APIs, and reaches its model provider only through the worker’s proxy', async () => {
    const targets = {
      provider: portOf(provider),
      redis: Number(new URL(redisUrl()).port),
      postgres: Number(new URL(system.databaseUrl).port),
      sim: Number(new URL(system.simUrl).port),
      gateway: Number(new URL(system.gateway.url).port),
    };
    const args = Object.entries(targets).map(([name, port]) => `${name}:127.0.0.1:${port}`).join(' ');
    const { output } = await run(7207, `${process.execPath} ${join(setup.dir, 'bin', 'net-probe.mjs')} ${args}`, 1);
    const lines = new Map(output.trim().split('\n').map((line) => [line.split(' ')[0], line] as const));
    // Nothing of the machine is there: the sandbox's loopback is its own.
    for (const name of Object.keys(targets)) expect(lines.get(name), output).toContain(' direct=ECONNREFUSED ');
    // Through the worker's proxy: the provider, and nothing else (the platform simulator holds the bot token's API).
    expect(lines.get('provider')).toBe('provider direct=ECONNREFUSED proxied=200:provider_answered tunnel=200');
    for (const name of ['redis', 'postgres', 'sim', 'gateway']) expect(lines.get(name), output).toMatch(/ proxied=403:switchboard:_a_Codex_chi tunnel=403$/);
    // Each refused destination is one warning in the worker's log (host and port only), the first time.
    const refusals = () => readFileSync(join(repoRoot, 'test-results/logs', `${(system.workers[0] as ManagedProcess).name}.log`), 'utf8').split('\n').filter((line) => line.includes('"CODEX_NET_REFUSED"'));
    await waitForCondition('the refusals logged', async () => refusals().length >= 4, 5_000);
    expect(refusals().map((line) => JSON.parse(line) as { level: string; port: number }).map(({ level, port }) => ({ level, port }))).toEqual(
      ['redis', 'postgres', 'sim', 'gateway'].map((name) => ({ level: 'warn', port: targets[name as keyof typeof targets] })),
    );
  });
});

describe('a worker where bubblewrap cannot run', () => {
  let system: TestSystem;
  let setup: CodexSetup;

  beforeAll(async () => {
    setup = codexSetup({ CODEX_SANDBOX: 'bwrap' });
    // No bwrap on this PATH (the worker's node and the fake are named by absolute paths).
    system = await TestSystem.start({ workerProcesses: true, workerEnv: { ...setup.workerEnv, PATH: join(setup.dir, 'no-bwrap-here') } });
  });
  afterAll(async () => {
    await system?.close();
    setup?.cleanup();
  });

  it('says so in one line at start, starts no Codex child, and fails each Codex turn with a notice that counts no crash', async () => {
    const worker = system.workers[0] as ManagedProcess;
    const logLines = () => readFileSync(join(repoRoot, 'test-results/logs', `${worker.name}.log`), 'utf8').split('\n').filter((line) => line.includes('no Codex child will be started'));
    await waitForCondition('the start-up line', async () => logLines().length > 0, 10_000);
    expect(logLines()).toHaveLength(1);
    expect(JSON.parse(logLines()[0] as string)).toMatchObject({ level: 'error', code: 'CODEX_SANDBOX_UNAVAILABLE' });
    expect(logLines()[0]).toContain('apt-get install bubblewrap');
    expect(logLines()[0]).toContain('CODEX_SANDBOX=off');

    await system.sendTelegram({ chatId: 7301, text: 'hello codex' });
    expect((await system.waitForTelegram(7301, 1))[0]?.text).toBe('Sorry, something went wrong and I could not answer that. Please try again.');
    const [turn] = await system.sql<{ status: string; error: string }[]>`
      select t.status, t.error from turns t join conversations c on c.id = t.conversation_id where c.chat_id = '7301'`;
    expect(turn).toEqual({ status: 'failed', error: 'CODEX_SANDBOX_UNAVAILABLE' });
    const [conversation] = await system.sql<{ runtime_crash_streak: number }[]>`select runtime_crash_streak from conversations where chat_id = '7301'`;
    expect(conversation?.runtime_crash_streak).toBe(0);
    expect(setup.readLog()).toEqual([]);
  });
});
