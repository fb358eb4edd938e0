import postgres from 'postgres';
import { gatewayEnvSchema, parseConfig, workerEnvSchema } from '@switchboard/config';
import { startGateway, type RunningGateway } from '@switchboard/gateway';
import { createSim, type Sim } from '@switchboard/sim';
import { startWorker, type RunningWorker } from '@switchboard/worker';
import { getFreePort, spawnApp, waitForHttp, type ManagedProcess } from '@switchboard/harness';
import { sendSlackEvent, slackBotToken, slackEnv, slackSigningSecret, waitForSlackMessages, type SentSlackMessage, type SlackDelivery, type SlackEventInput } from './slack.ts';
import { discordEnv, discordSimOptions } from './discord.ts';
import { createRedisPrefix, createTestDatabase, redisUrl, type TestDatabase } from './test-env.ts';

export const botToken = '123456:test-token';
export const webhookSecret = 'test-secret';

export interface SystemOptions {
  /** Worker count (default 1). */
  workers?: number;
  /** Run workers as separate Node processes instead of in this one. */
  workerProcesses?: boolean;
  /** Use this database instead of a fresh copy of the template (it must be migrated). */
  databaseUrl?: string;
  workerEnv?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
  /** Turn Slack on: gateway and worker get SLACK_* pointing at the simulator, which posts events to the gateway. */
  slack?: boolean;
  /** How long the simulated Slack waits for the gateway's answer (Slack's own: 3000 ms). */
  slackAckTimeoutMs?: number;
  /** Turn Discord on: gateway and worker get DISCORD_* pointing at the simulator, whose Gateway the gateway connects to. */
  discord?: boolean;
  /**
   * Turn voice transcription on: the worker's TRANSCRIBE_BASE_URL is the simulator's /v1 (the model's origin);
   * 'other-origin': the same simulator named `localhost`, an origin other than MODEL_BASE_URL's.
   */
  transcribe?: boolean | 'other-origin';
  /** Use this Redis instead of the run's shared one (a test that reads server-wide counters). */
  redisUrl?: string;
}

export interface TelegramMessageInput {
  chatId: number;
  text: string;
  fromId?: number;
  chatType?: 'private' | 'group' | 'supergroup';
  updateId?: number;
  secretToken?: string;
}

export interface SentTelegramMessage {
  message_id: number;
  chat_id: number;
  text: string;
}

/**
 * The whole system on loopback for one test file: the simulator, a gateway
 * and workers against this file's own database and Redis prefix.
 */
export class TestSystem {
  readonly sql: postgres.Sql;
  private constructor(
    readonly sim: Sim,
    readonly simUrl: string,
    readonly gateway: RunningGateway,
    readonly databaseUrl: string,
    readonly redisPrefix: string,
    private readonly env: Record<string, string>,
    readonly workers: (RunningWorker | ManagedProcess)[],
    private readonly database: TestDatabase | undefined,
  ) {
    this.sql = postgres(databaseUrl, { max: 2, onnotice: () => undefined });
  }

  static async start(options: SystemOptions = {}): Promise<TestSystem> {
    const database = options.databaseUrl ? undefined : await createTestDatabase();
    const databaseUrl = options.databaseUrl ?? (database as TestDatabase).url;
    const redisPrefix = createRedisPrefix();
    const sim = await createSim({ telegramBotToken: botToken, telegramWebhookSecret: webhookSecret, slackSigningSecret, slackBotToken, ...discordSimOptions, logLevel: 'warn',
      ...(options.slackAckTimeoutMs !== undefined ? { slackAckTimeoutMs: options.slackAckTimeoutMs } : {}),
    });
    const simUrl = await sim.listen(0, '127.0.0.1');
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: options.redisUrl ?? redisUrl(),
      REDIS_PREFIX: redisPrefix,
      LOG_LEVEL: 'warn',
      TELEGRAM_BOT_TOKEN: botToken,
      TELEGRAM_WEBHOOK_SECRET: webhookSecret,
      TELEGRAM_API_ROOT: simUrl,
      MODEL_BASE_URL: `${simUrl}/v1`,
      SWEEP_INTERVAL_MS: '500',
      // The tests written before streaming count a slow or stopped answer as one message once done
      // (STREAMING=off); streaming.e2e.test.ts turns it on. The default for everyone else stays on.
      STREAMING: 'off',
      ...(options.slack ? slackEnv(simUrl) : {}),
      ...(options.discord ? discordEnv(simUrl, sim.state.discord.store.publicKeyHex) : {}),
      ...(options.transcribe ? { TRANSCRIBE_BASE_URL: `${options.transcribe === 'other-origin' ? simUrl.replace('127.0.0.1', 'localhost') : simUrl}/v1` } : {}),
    };
    const gateway = await startGateway(parseConfig(gatewayEnvSchema, { ...env, PORT: '0', ...options.gatewayEnv }));
    await postJson(`${simUrl}/bot${botToken}/setWebhook`, { url: `${gateway.url}/webhooks/telegram`, secret_token: webhookSecret });
    if (options.slack) await postJson(`${simUrl}/control/slack/request-url`, { url: `${gateway.url}/webhooks/slack/events` });
    if (options.discord) await postJson(`${simUrl}/control/discord/config`, { interactions_url: `${gateway.url}/webhooks/discord/interactions` });
    const system = new TestSystem(sim, simUrl, gateway, databaseUrl, redisPrefix, { ...env, ...options.workerEnv }, [], database);
    for (let i = 0; i < (options.workers ?? 1); i++) await system.addWorker(options.workerProcesses ?? false);
    return system;
  }

  /**
   * A worker, in this process or as a process of its own (`startTimeoutMs`:
   * how long a process may take to answer /healthz; `env`: settings of this
   * worker only, over the system's). A process that does not start in time is
   * killed, not left running unseen by close().
   */
  async addWorker(asProcess: boolean, startTimeoutMs = 30_000, env: Record<string, string> = {}): Promise<RunningWorker | ManagedProcess> {
    if (!asProcess) {
      const worker = await startWorker(parseConfig(workerEnvSchema, { ...this.env, ...env, WORKER_PORT: '0' }));
      this.workers.push(worker);
      return worker;
    }
    const port = await getFreePort();
    const child = spawnApp(`worker-${this.redisPrefix}-${this.workers.length}`, 'apps/worker/src/main.ts', { ...this.env, ...env, WORKER_PORT: String(port) }, 'test-results/logs');
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, startTimeoutMs, child);
    } catch (error) {
      await child.stop('SIGKILL');
      throw error;
    }
    this.workers.push(child);
    return child;
  }

  /** Sends a user's message as a real Telegram webhook delivery; returns the gateway's answer. */
  async sendTelegram(input: TelegramMessageInput): Promise<{ status: number; updateId: number }> {
    const body = await postJson(`${this.simUrl}/control/telegram/updates`, {
      chat: { id: input.chatId, type: input.chatType ?? 'private' },
      from: { id: input.fromId ?? input.chatId, first_name: 'Tester' },
      text: input.text,
      ...(input.updateId !== undefined ? { update_id: input.updateId } : {}),
      ...(input.secretToken !== undefined ? { secret_token: input.secretToken } : {}),
    });
    const result = body as { update: { update_id: number }; status: number };
    return { status: result.status, updateId: result.update.update_id };
  }

  /** Waits until the bot has sent `count` messages to `chatId` in all, and returns them in order. */
  async waitForTelegram(chatId: number, count: number, timeoutMs = 20_000): Promise<SentTelegramMessage[]> {
    const response = await fetch(`${this.simUrl}/control/telegram/wait?chat_id=${chatId}&count=${count}&timeout_ms=${timeoutMs}`);
    const body = (await response.json()) as SentTelegramMessage[] | { sent: SentTelegramMessage[] };
    if (!response.ok) {
      const sent = Array.isArray(body) ? body : body.sent;
      throw new Error(`expected ${count} messages to chat ${chatId}, got ${sent.length}: ${JSON.stringify(sent.map((m) => m.text.slice(0, 80)))}`);
    }
    return body as SentTelegramMessage[];
  }

  /** Sends a Slack user's event as a real, signed Events API delivery (with Slack's retries); needs `slack: true`. */
  async sendSlack(input: SlackEventInput): Promise<SlackDelivery> {
    return sendSlackEvent(this.simUrl, input);
  }

  /** Waits until the bot has posted `count` messages in `channel` in all, and returns them in order. */
  async waitForSlack(channel: string, count: number, timeoutMs = 20_000): Promise<SentSlackMessage[]> {
    return waitForSlackMessages(this.simUrl, channel, count, timeoutMs);
  }

  async setModelScript(script: unknown): Promise<void> {
    await postJson(`${this.simUrl}/control/model/script`, script);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => ('close' in w ? w.close() : w.stop())));
    await this.gateway.close();
    await this.sim.close();
    await this.sql.end({ timeout: 5 });
    await this.database?.drop();
  }
}

export async function postJson(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}
