import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@switchboard/harness';
import { discordApplicationId, waitForDiscordMessages } from '../support/discord.ts';
import { callHook, createConversation, writeHooksFile } from '../support/hooks.ts';
import { TestSystem } from '../support/system.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-env.ts';

const secrets = { ci: 'ci-hook-secret-0123456789', alerts: 'alerts-hook-secret-0123456789', other: 'other-hook-secret-0123456789' };

describe('triggered turns: POST /hooks/{name} (docs/tools.md)', () => {
  let database: TestDatabase;
  let system: TestSystem;
  let ids: { telegram: number; slack: number; discord: number; suspended: number; burst: number; nightly: number };

  beforeAll(async () => {
    database = await createTestDatabase();
    ids = {
      telegram: await createConversation(database.url, { platform: 'telegram', accountId: '123456', chatId: '701', threadId: '', userScope: '' }),
      slack: await createConversation(database.url, { platform: 'slack', accountId: 'T0SIM', chatId: 'C0HOOKS', threadId: '', userScope: '' }),
      discord: await createConversation(database.url, { platform: 'discord', accountId: discordApplicationId, chatId: '1400000000000000705', threadId: '', userScope: '' }),
      suspended: await createConversation(database.url, { platform: 'telegram', accountId: '123456', chatId: '703', threadId: '', userScope: '' }, 'suspended'),
      nightly: await createConversation(database.url, { platform: 'telegram', accountId: '123456', chatId: '702', threadId: '', userScope: '' }),
      burst: await createConversation(database.url, { platform: 'telegram', accountId: '123456', chatId: '704', threadId: '', userScope: '' }),
    };
    const hooksFile = writeHooksFile({
      ci: { secret: secrets.ci, conversationId: ids.telegram, prompt: 'CI says: {{body}}' },
      alerts: { secret: secrets.alerts, conversationId: ids.slack, prompt: 'Alert {{body}}' },
      deploys: { secret: secrets.alerts, conversationId: ids.discord, prompt: 'Deployed {{body}}' },
      paused: { secret: secrets.other, conversationId: ids.suspended, prompt: '{{body}}' },
      gone: { secret: secrets.other, conversationId: 999_999, prompt: '{{body}}' },
      burst: { secret: secrets.other, conversationId: ids.burst, prompt: '{{body}}' },
      nightly: { secret: secrets.other, conversationId: ids.nightly, prompt: 'Nightly: {{body}}' },
    });
    // Three calls a minute per hook: the `ci` hook's test makes exactly three that count (a replay counts, a refused signature does not).
    system = await TestSystem.start({ databaseUrl: database.url, slack: true, discord: true, workerProcesses: true, gatewayEnv: { HOOKS_FILE: hooksFile, USER_RATE_LIMIT_PER_MINUTE: '3' } });
  });
  afterAll(async () => {
    await system?.close();
    await database?.drop();
  });

  const countHookEvents = async () => (await system.sql<{ n: number }[]>`select count(*)::int as n from inbound_events where event_id like 'hook:%'`)[0]?.n;

  it('runs a turn in a Telegram conversation and posts the reply to its chat once, a replayed delivery stored and answered once', async () => {
    const first = await callHook(system.gateway.url, { name: 'ci', secret: secrets.ci, body: '{"build":"failed"}', deliveryId: 'delivery-1' });
    expect(first).toEqual({ status: 200, body: { ok: true, outcome: 'accepted' } });
    const again = await callHook(system.gateway.url, { name: 'ci', secret: secrets.ci, body: '{"build":"failed"}', deliveryId: 'delivery-1' });
    expect(again.status).toBe(200);
    expect(again.body.outcome).toBe('duplicate');
    await system.waitForTelegram(701, 1);
    // Sent after the first answer, so busy_input_mode (interrupt by default) does not fold the two into one turn.
    await callHook(system.gateway.url, { name: 'ci', secret: secrets.ci, body: 'second', deliveryId: 'delivery-2' });
    // Replies come in order per conversation: a second turn for the replay would sit between these two.
    const replies = await system.waitForTelegram(701, 2);
    expect(replies.map((r) => r.text)).toEqual(['echo: CI says: {"build":"failed"}', 'echo: CI says: second']);
    const rows = await system.sql<{ event_id: string; user_id: string; command: string; text: string }[]>`
      select event_id, user_id, command, text from inbound_events where conversation_id = ${ids.telegram} order by id`;
    expect(rows).toEqual([
      { event_id: 'hook:ci:delivery-1', user_id: 'hook:ci', command: 'text', text: 'CI says: {"build":"failed"}' },
      { event_id: 'hook:ci:delivery-2', user_id: 'hook:ci', command: 'text', text: 'CI says: second' },
    ]);
    const [turn] = await system.sql<{ user_key: string }[]>`select user_key from turns where conversation_id = ${ids.telegram} order by id limit 1`;
    expect(turn?.user_key).toBe('telegram:123456:hook:ci');
  });

  it('runs a turn in a Slack conversation and posts the reply in its channel; a body that looks like a command is text', async () => {
    const { status } = await callHook(system.gateway.url, { name: 'alerts', secret: secrets.alerts, body: '/reset now', deliveryId: 'a-1', contentType: 'text/plain' });
    expect(status).toBe(200);
    const [reply] = await system.waitForSlack('C0HOOKS', 1);
    expect(reply?.text).toBe('echo: Alert /reset now');
  });

  it('runs a turn in a Discord conversation and posts the reply in its channel', async () => {
    const { status } = await callHook(system.gateway.url, { name: 'deploys', secret: secrets.alerts, body: 'v1.2.3', deliveryId: 'd-1', contentType: 'text/plain' });
    expect(status).toBe(200);
    const [reply] = await waitForDiscordMessages(system.simUrl, '1400000000000000705', 1);
    expect(reply?.content).toBe('echo: Deployed v1.2.3');
  });

  it('keeps a call stored while no worker runs and answers it once a worker starts', async () => {
    const [worker] = system.workers.splice(0, 1);
    await (worker && 'stop' in worker ? worker.stop() : worker?.close());
    const { status } = await callHook(system.gateway.url, { name: 'nightly', secret: secrets.other, body: 'while down', deliveryId: 'down-1' });
    expect(status).toBe(200);
    await system.addWorker(true);
    const [reply] = await system.waitForTelegram(702, 1);
    expect(reply?.text).toBe('echo: Nightly: while down');
  });

  it('refuses a bad or missing signature with 401, an unknown name with 404 and a body past the limit with 413, storing nothing', async () => {
    const before = await countHookEvents();
    const forged = await callHook(system.gateway.url, { name: 'ci', secret: 'not-the-secret-at-all', body: 'x', deliveryId: 'forged-1' });
    expect(forged).toEqual({ status: 401, body: { ok: false, error: 'HOOK_SIGNATURE_INVALID' } });
    expect((await callHook(system.gateway.url, { name: 'ci', secret: secrets.ci, body: 'x', deliveryId: 'forged-2', signature: '' })).status).toBe(401);
    const unknown = await callHook(system.gateway.url, { name: 'nope', secret: secrets.ci, body: 'x', deliveryId: 'u-1' });
    expect(unknown).toEqual({ status: 404, body: { ok: false, error: 'HOOK_NOT_FOUND' } });
    const huge = await callHook(system.gateway.url, { name: 'ci', secret: secrets.ci, body: 'x'.repeat(1024 * 1024 + 1), deliveryId: 'big-1' });
    expect(huge.status).toBe(413);
    const noDelivery = await callHook(system.gateway.url, { name: 'ci', secret: secrets.ci, body: 'x' });
    expect(noDelivery.body.error).toBe('HOOK_DELIVERY_INVALID');
    expect(await countHookEvents()).toBe(before);
  });

  it('refuses a suspended or missing conversation with 409, storing nothing', async () => {
    const before = await countHookEvents();
    const paused = await callHook(system.gateway.url, { name: 'paused', secret: secrets.other, body: 'x', deliveryId: 'p-1' });
    expect(paused).toEqual({ status: 409, body: { ok: false, error: 'HOOK_CONVERSATION_SUSPENDED' } });
    const gone = await callHook(system.gateway.url, { name: 'gone', secret: secrets.other, body: 'x', deliveryId: 'g-1' });
    expect(gone).toEqual({ status: 409, body: { ok: false, error: 'HOOK_CONVERSATION_MISSING' } });
    expect(await countHookEvents()).toBe(before);
  });

  it('counts a hook as a user of its own under USER_RATE_LIMIT_PER_MINUTE: past it 429, nothing stored', async () => {
    const answers = [];
    for (const n of [1, 2, 3, 4]) answers.push(await callHook(system.gateway.url, { name: 'burst', secret: secrets.other, body: `call ${n}`, deliveryId: `b-${n}` }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers[3]?.body.error).toBe('HOOK_RATE_LIMITED');
    const [stored] = await system.sql<{ n: number }[]>`select count(*)::int as n from inbound_events where conversation_id = ${ids.burst}`;
    expect(stored?.n).toBe(3);
  });
});

describe('gateway start-up with HOOKS_FILE', () => {
  it('refuses an invalid HOOKS_FILE with one line per bad entry and exit 1, never showing a secret', { timeout: 40_000 }, async () => {
    const secret = 'tiny';
    const hooksFile = writeHooksFile({ ok: { secret: secrets.ci, conversationId: 1, prompt: 'p' }, weak: { secret, conversationId: 1, prompt: 'p' }, noid: { secret: secrets.ci, prompt: 'p' } });
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'apps/gateway/src/main.ts')], {
      cwd: repoRoot,
      // Nothing listens on port 1: the file is read before anything is opened.
      env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1', PORT: '0', HOOKS_FILE: hooksFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      'Invalid configuration: HOOKS_FILE hook "weak": secret must be at least 16 characters',
      'Invalid configuration: HOOKS_FILE hook "noid": conversationId is required',
    ]);
  });
});
