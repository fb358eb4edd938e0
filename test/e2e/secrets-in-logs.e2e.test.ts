import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getFreePort, repoRoot, spawnApp, waitForHttp, type ManagedProcess } from '@switchboard/harness';
import { adminRequest } from '../support/admin-client.ts';
import { callHook, createConversation, writeHooksFile } from '../support/hooks.ts';
import { signSlackBody, slackBotToken, slackEnv, slackSigningSecret } from '../support/slack.ts';
import { botToken, postJson, TestSystem, webhookSecret } from '../support/system.ts';
import { armTelegramFault } from '../support/turn-helpers.ts';
import { createTestDatabase, redisUrl, type TestDatabase } from '../support/test-env.ts';

const adminToken = 'opsadmin-Zq7Rk2Vx9Lm4Pw8T';
const modelKey = 'sk-model-Hn3Jt6Yb1Qc5Ws0E';
const eventSecret = 'evsecret-Fd8Gk2Mn5Rt7Xy1Z';
const dbPassword = 'dbpw-Kc4Lp9Vb2Nm6Qx3W';
const fileText = 'file-text-Wq5Tz8Lm3Rb6Kx1V';
const hookSecret = 'hooksecret-Gt4Wn8Pz2Lx6Vc9B';

/** DATABASE_URL with a password in it: the test cluster trusts loopback, so the password is carried and never checked. */
function withPassword(url: string): string {
  const parsed = new URL(url);
  parsed.password = dbPassword;
  return parsed.toString();
}

// Issue 19, security pass: with every process logging at `trace`, a
// run through good and bad requests, admin actions, a failing model and a
// failing platform leaves no configured secret in any log line, error or
// admin response.
describe('secrets never reach logs, errors or admin answers', () => {
  let system: TestSystem;
  let database: TestDatabase;
  let gateway: ManagedProcess;
  let gatewayUrl = '';
  const logName = `secrets-gateway-${process.pid}`;
  const secrets: Record<string, string> = {
    'admin token': adminToken,
    'model API key': modelKey,
    'event webhook secret': eventSecret,
    'database password': dbPassword,
    'Telegram bot token': botToken,
    'Telegram bot token (secret part)': botToken.split(':')[1] as string,
    'Telegram webhook secret': webhookSecret,
    'Slack signing secret': slackSigningSecret,
    'Slack bot token': slackBotToken,
    // Issue 34: a hook's secret lives in HOOKS_FILE and the gateway's memory only (docs/tools.md, "Secrets").
    'hook secret': hookSecret,
    // Not a secret, but the user's: a file's text never reaches a log either (docs/media.md).
    'a file the user sent': fileText,
  };
  const answers: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    system = await TestSystem.start({
      databaseUrl: withPassword(database.url),
      slack: true,
      workerProcesses: true,
      workerEnv: { LOG_LEVEL: 'trace', MODEL_API_KEY: modelKey, EVENT_WEBHOOK_SECRET: eventSecret },
    });
    const port = await getFreePort();
    gatewayUrl = `http://127.0.0.1:${port}`;
    const hookConversation = await createConversation(system.databaseUrl, { platform: 'telegram', accountId: botToken.split(':')[0] as string, chatId: '881006', threadId: '', userScope: '' });
    const hooksFile = writeHooksFile({ ci: { secret: hookSecret, conversationId: hookConversation, prompt: 'CI: {{body}}' } });
    gateway = spawnApp(
      logName,
      'apps/gateway/src/main.ts',
      {
        DATABASE_URL: system.databaseUrl,
        REDIS_URL: redisUrl(),
        REDIS_PREFIX: system.redisPrefix,
        LOG_LEVEL: 'trace',
        PORT: String(port),
        ADMIN_TOKEN: adminToken,
        TELEGRAM_BOT_TOKEN: botToken,
        TELEGRAM_WEBHOOK_SECRET: webhookSecret,
        TELEGRAM_API_ROOT: system.simUrl,
        EVENT_WEBHOOK_SECRET: eventSecret,
        HOOKS_FILE: hooksFile,
        ...slackEnv(system.simUrl),
      },
      'test-results/logs',
    );
    await waitForHttp(`${gatewayUrl}/readyz`, 30_000, gateway);
    await postJson(`${system.simUrl}/bot${botToken}/setWebhook`, { url: `${gatewayUrl}/webhooks/telegram`, secret_token: webhookSecret });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await system?.close();
    await database?.drop();
  });

  it('runs good and bad traffic through every process', async () => {
    // A normal turn, a model that fails for good, and a Telegram API that fails once.
    await system.setModelScript({ rules: [{ match: 'fail-model', error: { status: 401, message: 'bad key' } }] });
    await system.sendTelegram({ chatId: 881_001, text: 'hello' });
    await system.waitForTelegram(881_001, 1);
    await system.sendTelegram({ chatId: 881_002, text: 'fail-model please' });
    await system.waitForTelegram(881_002, 1);
    await armTelegramFault(system, { method: 'sendMessage', kind: '500', times: 1 });
    await system.sendTelegram({ chatId: 881_003, text: 'after a platform error' });
    await system.waitForTelegram(881_003, 1);
    // A file read (through a Telegram file URL, which holds the bot token), and one whose download fails.
    const file = (await postJson(`${system.simUrl}/control/media/files`, { name: 'notes.txt', mime: 'text/plain', text: fileText })) as { id: string };
    await postJson(`${system.simUrl}/control/telegram/updates`, { chat: { id: 881_004, type: 'private' }, document: file.id });
    await system.waitForTelegram(881_004, 1);
    await postJson(`${system.simUrl}/control/media/faults`, { method: 'telegram', kind: '500', times: 1 });
    await postJson(`${system.simUrl}/control/telegram/updates`, { chat: { id: 881_005, type: 'private' }, document: file.id });
    await system.waitForTelegram(881_005, 1);

    // A triggered turn answered in its chat, and a hook call with a wrong signature.
    answers.push(JSON.stringify((await callHook(gatewayUrl, { name: 'ci', secret: hookSecret, body: 'build failed', deliveryId: 'secrets-1' })).body));
    answers.push(...(await system.waitForTelegram(881_006, 1)).map((reply) => reply.text));
    const forged = await callHook(gatewayUrl, { name: 'ci', secret: hookSecret, body: 'x', deliveryId: 'secrets-2', signature: `sha256=${'0'.repeat(64)}` });
    expect(forged.status).toBe(401);
    answers.push(JSON.stringify(forged.body));

    // Bad credentials on every inbound route.
    const bad = async (path: string, headers: Record<string, string>, body = '{}') => {
      const response = await fetch(`${gatewayUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      answers.push(await response.text());
      return response.status;
    };
    expect(await bad('/webhooks/telegram', { 'x-telegram-bot-api-secret-token': `${webhookSecret}x` })).toBe(401);
    const slackBody = JSON.stringify({ type: 'event_callback', event_id: 'Ev1', event: { type: 'message' } });
    expect(await bad('/webhooks/slack/events', { ...signSlackBody(slackBody), 'x-slack-signature': 'v0=00' }, slackBody)).toBe(401);

    // Admin: a near-miss token, the right one, an action and the audit log.
    for (const token of [`${adminToken}x`, adminToken.slice(0, -1), adminToken]) {
      const answer = await adminRequest(gatewayUrl, 'GET', '/admin/whoami', { token, localAddress: '127.0.0.51' });
      answers.push(JSON.stringify(answer.body), JSON.stringify(answer.headers));
    }
    for (const path of ['/admin/conversations?limit=50', '/admin/audit', '/admin/outbox?limit=50', '/admin/workers']) {
      const answer = await adminRequest(gatewayUrl, 'GET', path, { token: adminToken });
      answers.push(JSON.stringify(answer.body));
    }
  }, 60_000);

  it('finds no configured secret in any log line or answer', () => {
    const logDir = join(repoRoot, 'test-results/logs');
    const logs = [join(logDir, `${logName}.log`), join(logDir, `worker-${system.redisPrefix}-0.log`)].map((file) => ({ file, text: readFileSync(file, 'utf8') }));
    // The error paths, where a secret would most likely leak, really were logged (else an empty log would pass).
    const [gatewayLog, workerLog] = logs.map((log) => log.text);
    for (const line of ['admin authentication failed', 'webhook rejected', 'slack event rejected', 'hook call rejected', 'triggered turns on']) expect(gatewayLog).toContain(line);
    for (const line of ['MODEL_FAILED', 'delivery retrying', 'turn committed', 'FILE_FETCH_FAILED']) expect(workerLog).toContain(line);
    const found: string[] = [];
    for (const [name, value] of Object.entries(secrets)) {
      for (const log of logs) if (log.text.includes(value)) found.push(`${name} in ${log.file}`);
      if (answers.some((answer) => answer.includes(value))) found.push(`${name} in an HTTP answer`);
    }
    expect(found).toEqual([]);
  });
});
