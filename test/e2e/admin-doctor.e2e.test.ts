import { execFile } from 'node:child_process';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from '../../scripts/lib/demo-platforms.ts';
import { repoRoot } from '@switchboard/harness';
import { discordApplicationId, discordBotToken } from '../support/discord.ts';
import { slackBotToken, slackSigningSecret } from '../support/slack.ts';
import { botToken, TestSystem, webhookSecret } from '../support/system.ts';
import { createTestDatabase, getFreePort, redisUrl } from '../support/test-env.ts';

interface DoctorRun {
  code: number | null;
  /** Output lines by check name. */
  lines: Map<string, string>;
  output: string;
}

/** Runs `scripts/doctor.ts` as `npm run doctor` would, with only the given environment. */
function runDoctor(env: Record<string, string>): Promise<DoctorRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'scripts/doctor.ts')],
      { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 60_000 },
      (error, stdout) => {
        const lines = new Map<string, string>();
        for (const line of stdout.split('\n')) {
          const match = /^(?:ok|WARN|FAIL|skip)\s+(\S+(?: \(\w+\))?)\s/.exec(line);
          if (match?.[1]) lines.set(match[1], line);
        }
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, lines, output: stdout });
      },
    );
  });
}

describe('npm run doctor', () => {
  let system: TestSystem;
  let env: Record<string, string>;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 0 });
    env = {
      DATABASE_URL: system.databaseUrl,
      REDIS_URL: redisUrl(),
      TELEGRAM_BOT_TOKEN: botToken,
      TELEGRAM_WEBHOOK_SECRET: webhookSecret,
      TELEGRAM_API_ROOT: system.simUrl,
      SLACK_BOT_TOKEN: slackBotToken,
      SLACK_SIGNING_SECRET: slackSigningSecret,
      SLACK_API_URL: `${system.simUrl}/api/`,
      DISCORD_BOT_TOKEN: discordBotToken,
      DISCORD_APPLICATION_ID: discordApplicationId,
      DISCORD_API_URL: `${system.simUrl}/api`,
      MODEL_BASE_URL: `${system.simUrl}/v1`,
    };
  });
  afterAll(async () => {
    await system?.close();
  });

  it('passes every check against a healthy system and the simulator', async () => {
    const run = await runDoctor(env);
    expect(run.code, run.output).toBe(0);
    for (const name of ['config (gateway)', 'config (worker)', 'postgres', 'migrations', 'redis', 'model', 'telegram', 'webhook (telegram)', 'slack', 'discord']) {
      expect(run.lines.get(name), `${name}\n${run.output}`).toMatch(/^ok /);
    }
    expect(run.lines.get('model')).toContain('GET /models');
    expect(run.lines.get('telegram')).toContain('getMe');
    expect(run.lines.get('webhook (telegram)')).toContain('/webhooks/telegram');
    expect(run.lines.get('slack')).toContain('auth.test');
    expect(run.lines.get('discord')).toContain('/users/@me');
  });

  it('fails the line of a broken credential, says what to do, and exits non-zero', async () => {
    const run = await runDoctor({ ...env, TELEGRAM_BOT_TOKEN: '123456:wrong-token' });
    expect(run.code, run.output).toBe(1);
    expect(run.lines.get('telegram')).toMatch(/^FAIL .*401.*→ check TELEGRAM_BOT_TOKEN/);
    for (const name of ['config (gateway)', 'config (worker)', 'postgres', 'migrations', 'redis', 'slack', 'discord']) {
      expect(run.lines.get(name), `${name}\n${run.output}`).toMatch(/^ok /);
    }
    expect(run.output).not.toContain('wrong-token');
  });

  it('fails the model line when MODEL_BASE_URL points at a closed port, with the fix', async () => {
    const closedPort = await getFreePort();
    const run = await runDoctor({ ...env, MODEL_BASE_URL: `http://127.0.0.1:${closedPort}/v1` });
    expect(run.code, run.output).toBe(1);
    expect(run.lines.get('model')).toMatch(new RegExp(`^FAIL .*cannot reach 127\\.0\\.0\\.1:${closedPort}/v1.*→ start the model server or correct MODEL_BASE_URL`));
    expect(run.lines.get('telegram'), run.output).toMatch(/^ok /);
  });

  it('warns when Telegram has no webhook, one elsewhere, or one in polling mode, and reports its last delivery error', async () => {
    const setWebhook = (url: string) => postJson(`${system.simUrl}/bot${botToken}/setWebhook`, { url, secret_token: webhookSecret });
    const gatewayWebhook = ((await (await fetch(`${system.simUrl}/bot${botToken}/getWebhookInfo`)).json()) as { result: { url: string } }).result.url;
    try {
      const polling = await runDoctor({ ...env, TELEGRAM_MODE: 'polling' });
      expect(polling.code, polling.output).toBe(0);
      expect(polling.lines.get('webhook (telegram)')).toMatch(/^WARN .*TELEGRAM_MODE=polling but a webhook is set.*→ deleteWebhook/);

      await setWebhook('');
      expect((await runDoctor(env)).lines.get('webhook (telegram)')).toMatch(/^WARN .*no webhook set.*→ setWebhook to https:\/\/<gateway>\/webhooks\/telegram/);

      await setWebhook('https://example.invalid/hooks/other');
      expect((await runDoctor(env)).lines.get('webhook (telegram)')).toMatch(/^WARN .*the webhook is https:\/\/example\.invalid\/hooks\/other, not the gateway's \/webhooks\/telegram/);

      // A webhook nobody answers: the simulated Telegram records the failed delivery as Telegram does.
      await setWebhook(`http://127.0.0.1:${await getFreePort()}/webhooks/telegram`);
      await postJson(`${system.simUrl}/control/telegram/updates`, { chat: { id: 9901, type: 'private' }, from: { id: 9901, first_name: 'Doc' }, text: 'hello' });
      await expect.poll(async () => ((await (await fetch(`${system.simUrl}/bot${botToken}/getWebhookInfo`)).json()) as { result: { last_error_message?: string } }).result.last_error_message, { timeout: 15_000 }).toBeTruthy();
      expect((await runDoctor(env)).lines.get('webhook (telegram)')).toMatch(/^WARN .*last delivery error at .*→ make that URL reach the gateway/);
    } finally {
      await setWebhook(gatewayWebhook);
    }
  }, 90_000); // Three doctor runs, each a fresh process: 13 s on a quiet 2-core machine, past 30 s under a full suite's load.

  it('reports every bad variable at once, the rules across variables included', async () => {
    const withoutSecret = Object.fromEntries(Object.entries(env).filter(([name]) => name !== 'TELEGRAM_WEBHOOK_SECRET'));
    const run = await runDoctor({ ...withoutSecret, PORT: 'not-a-port', LOG_LEVEL: 'loud' });
    expect(run.code).toBe(1);
    const line = run.lines.get('config (gateway)') ?? '';
    expect(line, run.output).toMatch(/^FAIL /);
    expect(line).toContain('PORT must be a port number');
    expect(line).toContain('LOG_LEVEL');
    expect(line).toContain('TELEGRAM_WEBHOOK_SECRET is required when TELEGRAM_BOT_TOKEN is set');
  });

  it('reports pending migrations, an unreachable Redis and bad configuration', async () => {
    const database = await createTestDatabase();
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      await sql`delete from drizzle.__drizzle_migrations where created_at = (select max(created_at) from drizzle.__drizzle_migrations)`;
      const closedPort = await getFreePort();
      const run = await runDoctor({ DATABASE_URL: database.url, REDIS_URL: `redis://127.0.0.1:${closedPort}`, PORT: 'not-a-port' });
      expect(run.code).toBe(1);
      expect(run.lines.get('migrations')).toMatch(/^FAIL .*1 of \d+ not applied.*→ run npm run db:migrate/);
      expect(run.lines.get('redis')).toMatch(/^FAIL .*cannot reach.*→ start Redis/);
      expect(run.lines.get('config (gateway)')).toMatch(/^FAIL .*PORT/);
      expect(run.lines.get('telegram')).toMatch(/^skip .*off/);
    } finally {
      await sql.end({ timeout: 5 });
      await database.drop();
    }
  });
});
