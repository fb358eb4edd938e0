import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv } from '../support/admin-client.ts';
import { codexSetup, waitForTurnStart, type CodexSetup } from '../support/codex-system.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/restart-webhook-receiver.ts';
import { botToken, TestSystem } from '../support/system.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

// Issue 30, finding 1: a chat user of a Codex conversation says "run: env" and reads what the child was given.
// Through a real worker process and the fake app-server as its real child (it prints its own process.env for
// `env`), the worker holding every secret an operator's shared .env would give it: the child must get none of
// them, only its allow-list, and its own HOME, CODEX_HOME and TMPDIR (docs/codex.md, "What a child gets").
// CODEX_AUTO_APPROVE is on so the command runs without a button press: the attacker is the asked user anyway.

const eventSecret = 'event-secret-for-the-env-test';
const providerKey = 'sim-provider-key-for-codex';
const operatorConfig = ['model_provider = "sim"', '[model_providers.sim]', 'base_url = "http://127.0.0.1:9/v1"', 'env_key = "SIM_PROVIDER_KEY"', ''].join('\n');

/** The child's environment as the fake printed it in its reply ("codex: ran env", then NAME=value lines). */
async function childEnvOf(system: TestSystem, chatId: number, count: number): Promise<Record<string, string>> {
  const reply = (await system.waitForTelegram(chatId, count)).at(-1)?.text ?? '';
  expect(reply.startsWith('codex: ran env\n')).toBe(true);
  const lines = reply.split('\n').slice(1).filter(Boolean);
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

async function conversationIdOf(system: TestSystem, chatId: number): Promise<number> {
  const [row] = await system.sql<{ id: string }[]>`select id from conversations where chat_id = ${String(chatId)}`;
  return Number(row?.id);
}

describe('a Codex child’s environment, through a worker process', () => {
  let system: TestSystem;
  let setup: CodexSetup;
  let receiver: WebhookReceiver;
  let operatorHome: string;
  let secrets: string[];

  beforeAll(async () => {
    receiver = await startWebhookReceiver(eventSecret);
    setup = codexSetup({ CODEX_AUTO_APPROVE: 'on', CODEX_ALLOW_FULL_ACCESS: 'on' });
    operatorHome = join(setup.dir, 'operator-codex');
    mkdirSync(operatorHome);
    writeFileSync(join(operatorHome, 'config.toml'), operatorConfig);
    writeFileSync(join(operatorHome, 'auth.json'), '{"OPENAI_API_KEY":null}');
    const eventUrl = `${receiver.url}/hook-path-that-is-a-secret`;
    const workerEnv = {
      ...setup.workerEnv,
      ADMIN_TOKEN: adminTokenEnv,
      EVENT_WEBHOOK_URLS: eventUrl,
      EVENT_WEBHOOK_SECRET: eventSecret,
      SLACK_BOT_TOKEN: 'xoxb-worker-slack-token',
      DISCORD_BOT_TOKEN: 'worker-discord-token',
      OPENAI_API_KEY: 'sk-not-the-configured-provider',
      SIM_PROVIDER_KEY: providerKey,
      CODEX_HOME: operatorHome,
    };
    system = await TestSystem.start({ workerProcesses: true, workerEnv, gatewayEnv: { ADMIN_TOKEN: adminTokenEnv, CODEX_ALLOW_FULL_ACCESS: 'on' } });
    secrets = [system.databaseUrl, botToken, adminTokenEnv, eventUrl, eventSecret, 'xoxb-worker-slack-token', 'worker-discord-token', 'sk-not-the-configured-provider'];
  });
  afterAll(async () => {
    await system?.close();
    await receiver?.close();
    setup?.cleanup();
  });

  it('gives the child none of the worker’s secrets, only its allow-list and its own private HOME, CODEX_HOME and TMPDIR', async () => {
    await system.sendTelegram({ chatId: 6101, text: 'run: env' });
    const env = await childEnvOf(system, 6101, 1);
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'ADMIN_TOKEN', 'EVENT_WEBHOOK_URLS', 'EVENT_WEBHOOK_SECRET', 'TELEGRAM_BOT_TOKEN', 'SLACK_BOT_TOKEN', 'DISCORD_BOT_TOKEN', 'OPENAI_API_KEY']) {
      expect(env[name], name).toBeUndefined();
    }
    const printed = Object.values(env).join('\n');
    for (const secret of secrets) expect(printed.includes(secret), 'a secret in the child’s env').toBe(false);
    expect(printed).not.toMatch(/postgres:\/\/|redis:\/\//);
    // PWD: bubblewrap sets it to the directory it starts the child in, the conversation's workspace. The proxy
    // variables: the bridge to the worker's proxy, the child's one way out (docs/codex.md, "The child's network").
    expect(Object.keys(env).filter((name) => !/^(PATH|HOME|CODEX_HOME|TMPDIR|LANG|LC_[A-Z_]+|TERM|PWD|SIM_PROVIDER_KEY|FAKE_CODEX_STATE_DIR|FAKE_CODEX_LOG)$/.test(name) && !/^(HTTP_PROXY|HTTPS_PROXY|ALL_PROXY)$/i.test(name))).toEqual([]);
    for (const name of ['HTTP_PROXY', 'https_proxy']) expect(env[name], name).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const home = join(setup.workerEnv.CODEX_HOMES, String(await conversationIdOf(system, 6101)));
    if (env.PWD !== undefined) expect(env.PWD).toBe(join(setup.workerEnv.CODEX_WORKSPACES, String(await conversationIdOf(system, 6101))));
    expect(env).toMatchObject({ HOME: home, CODEX_HOME: join(home, '.codex'), TMPDIR: join(home, 'tmp') });
    for (const dir of [home, join(home, '.codex'), join(home, 'tmp')]) expect(statSync(dir).mode & 0o777, dir).toBe(0o700);
  });

  it('gives each conversation its own CODEX_HOME, seeded with the operator’s config.toml and login, and the provider key that config names', async () => {
    await system.sendTelegram({ chatId: 6102, text: 'run: env' });
    const env = await childEnvOf(system, 6102, 1);
    const home = join(setup.workerEnv.CODEX_HOMES, String(await conversationIdOf(system, 6102)));
    expect(env.CODEX_HOME).toBe(join(home, '.codex'));
    expect(env.CODEX_HOME).not.toBe(join(setup.workerEnv.CODEX_HOMES, String(await conversationIdOf(system, 6101)), '.codex'));
    // The one credential Codex needs: env_key of the provider the operator's config.toml chose, not OPENAI_API_KEY.
    expect(env.SIM_PROVIDER_KEY).toBe(providerKey);
    expect(readFileSync(join(home, '.codex', 'config.toml'), 'utf8')).toBe(operatorConfig);
    expect(statSync(join(home, '.codex', 'auth.json')).mode & 0o777).toBe(0o600);
  });

  it('sends each profile’s approval policy to the child: untrusted for read-only and full-access, on-request for workspace-write, never only for full-access-unattended', async () => {
    const expected = { 'read-only': 'untrusted', 'workspace-write': 'on-request', 'full-access': 'untrusted', 'full-access-unattended': 'never' } as const;
    let chatId = 6110;
    for (const [profile, policy] of Object.entries(expected)) {
      chatId += 1;
      await system.sendTelegram({ chatId, text: 'hello' });
      await system.waitForTelegram(chatId, 1);
      const id = await conversationIdOf(system, chatId);
      expect((await adminRequest(system.gateway.url, 'PUT', `/admin/conversations/${id}/runtime`, { body: { permissionProfile: profile } })).status).toBe(200);
      await system.sendTelegram({ chatId, text: `run: ls ${profile}` });
      expect((await system.waitForTelegram(chatId, 2)).at(-1)?.text).toBe(`codex: ran ls ${profile}`);
      const started = await waitForTurnStart(setup, `run: ls ${profile}`);
      expect(started.received.params?.approvalPolicy, profile).toBe(policy);
      // The fake asks unless the policy is `never`; an auto-approved question is still stored (decided_via auto).
      await waitForCondition(`the turn of ${profile} to be committed`, async () => (await system.sql`select 1 from turns where conversation_id = ${id} and status = 'completed'`).length === 2, 20_000);
      const asked = await system.sql<{ decided_via: string }[]>`select decided_via from approvals where conversation_id = ${id}`;
      expect(asked.map((a) => a.decided_via), profile).toEqual(policy === 'never' ? [] : ['auto']);
    }
  });
});
