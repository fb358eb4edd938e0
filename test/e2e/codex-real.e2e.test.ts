import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { repoRoot, type ManagedProcess } from '@switchboard/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv } from '../support/admin-client.ts';
import { childUserSetting, codexSetup, type CodexSetup } from '../support/codex-system.ts';
import { startResponsesSim, type ResponsesSim } from '../support/responses-sim.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

// Issue 30, finding 1: the real `@openai/codex` app-server (npm), not the fake, as a worker's child in its
// bubblewrap sandbox, its model provider pointed at a Responses API stand-in (no login). `.ci/run` installs the
// pinned version into .data/real-codex; elsewhere set REAL_CODEX_COMMAND to a `codex`, or this file is skipped.
// CODEX_SANDBOX_E2E=off runs it unconfined: the command test then fails (the worker's environment and HOME are read).

const installed = join(repoRoot, '.data/real-codex/node_modules/.bin/codex');
const realCodex = process.env.REAL_CODEX_COMMAND || (existsSync(installed) ? installed : undefined);
if (!realCodex) console.warn('codex-real.e2e: no real Codex (REAL_CODEX_COMMAND, or .data/real-codex from .ci/run): skipped');

describe.skipIf(!realCodex)('the real Codex app-server in the sandbox, through a worker process', () => {
  let system: TestSystem;
  let setup: CodexSetup;
  let model: ResponsesSim;
  let workerHome: string;
  const homeSecret = `home-secret-${randomUUID()}`;

  async function conversationIdOf(chatId: number): Promise<number> {
    const [row] = await system.sql<{ id: string }[]>`select id from conversations where chat_id = ${String(chatId)}`;
    return Number(row?.id);
  }

  beforeAll(async () => {
    model = await startResponsesSim();
    setup = codexSetup({ CODEX_COMMAND: `"${realCodex}" app-server`, CODEX_ENV_PASSTHROUGH: '', CODEX_SANDBOX: process.env.CODEX_SANDBOX_E2E === 'off' ? 'off' : 'bwrap', CODEX_ALLOW_FULL_ACCESS: 'on' });
    workerHome = join(setup.dir, 'worker-home');
    mkdirSync(join(workerHome, '.codex'), { recursive: true });
    writeFileSync(join(workerHome, 'secret.txt'), homeSecret);
    // The operator's Codex configuration, copied into each conversation's CODEX_HOME: a provider that needs no login.
    const config = ['model = "sim-model"', 'model_provider = "sim"', '[model_providers.sim]', 'name = "sim"', `base_url = "${model.url}"`, 'env_key = "SIM_PROVIDER_KEY"', 'wire_api = "responses"', ''];
    writeFileSync(join(workerHome, '.codex', 'config.toml'), config.join('\n'));
    const workerEnv = { ...setup.workerEnv, HOME: workerHome, CODEX_HOME: join(workerHome, '.codex'), SIM_PROVIDER_KEY: 'sim-key', ADMIN_TOKEN: adminTokenEnv };
    system = await TestSystem.start({ workerProcesses: true, workerEnv, gatewayEnv: { ADMIN_TOKEN: adminTokenEnv, CODEX_ALLOW_FULL_ACCESS: 'on' } });
  });
  afterAll(async () => {
    await system?.close();
    await model?.close();
    setup?.cleanup();
  });

  it('answers a chat message: the turn reaches the model provider from inside the sandbox', async () => {
    await system.sendTelegram({ chatId: 7401, text: 'hello real codex' });
    expect((await system.waitForTelegram(7401, 1, 60_000))[0]?.text).toBe('echo: hello real codex');
    expect(model.requests.length).toBeGreaterThan(0);
  });

  it.runIf(process.getuid?.() === 0 && childUserSetting().CODEX_SANDBOX_USER === undefined)('runs a command inside Codex’s own sandbox (workspace-write) for a root worker, whose child runs as a uid of its own', async () => {
    await system.sendTelegram({ chatId: 7403, text: 'hello' });
    await system.waitForTelegram(7403, 1, 60_000);
    const id = await conversationIdOf(7403);
    expect((await adminRequest(system.gateway.url, 'PUT', `/admin/conversations/${id}/runtime`, { body: { permissionProfile: 'workspace-write' } })).status).toBe(200);
    await system.sendTelegram({ chatId: 7403, text: 'exec: echo inside > own.txt; cat own.txt; id -u' });
    const reply = (await system.waitForTelegram(7403, 2, 60_000)).at(-1)?.text ?? '';
    expect(reply, reply).toContain('inside');
    expect(reply).toContain(String(2_000_000_000 + id));
    expect(reply).not.toContain('setting up uid map');
  });

  it('runs a command the model asks for, with no sandbox of Codex’s own (full-access-unattended), and still only inside its own', async () => {
    await system.sendTelegram({ chatId: 7402, text: 'hello' });
    await system.waitForTelegram(7402, 1, 60_000);
    const id = await conversationIdOf(7402);
    expect((await adminRequest(system.gateway.url, 'PUT', `/admin/conversations/${id}/runtime`, { body: { permissionProfile: 'full-access-unattended' } })).status).toBe(200);
    const workerPid = (system.workers[0] as ManagedProcess).child.pid as number;
    const other = join(setup.workerEnv.CODEX_WORKSPACES, String(await conversationIdOf(7401)));
    const probe = join(setup.dir, 'bin', 'net-probe.mjs');
    copyFileSync(join(repoRoot, 'test/support/net-probe.mjs'), probe);
    const redis = `redis:127.0.0.1:${new URL(redisUrl()).port}`;
    const probeCommand = `${process.execPath} ${probe} ${redis}`;
    await system.sendTelegram({ chatId: 7402, text: `exec: cat /proc/${workerPid}/environ ${workerHome}/secret.txt; ls ${other}; echo mine > note.txt; cat note.txt; ${probeCommand}` });
    const reply = (await system.waitForTelegram(7402, 2, 60_000)).at(-1)?.text ?? '';
    expect(reply.startsWith('ran: '), reply).toBe(true);
    expect(reply).not.toContain(system.databaseUrl);
    expect(reply).not.toContain(homeSecret);
    expect(reply).toContain(`/proc/${workerPid}/environ: No such file or directory`);
    expect(reply).toContain(`${workerHome}/secret.txt: No such file or directory`);
    expect(reply).toContain(`${other}': No such file or directory`);
    expect(reply).toContain('mine');
    // Its network is its own (CODEX_SANDBOX_NETWORK=provider): Redis is not there, and the worker's proxy refuses it.
    expect(reply).toContain('redis direct=ECONNREFUSED proxied=403:');
  });
});
