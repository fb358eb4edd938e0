import { Api } from 'grammy';
import { loadHooksFile, type GatewayConfig } from '@switchboard/config';
import { createDbClient, databaseReach } from '@switchboard/db';
import { createLogger, type Logger } from '@switchboard/logger';
import { readTelegramBotId, type TelegramParseContext } from '@switchboard/platforms';
import { createRedisConnection, createScheduleQueue, redisReachOf, createTurnQueue } from '@switchboard/queue';
import { buildGatewayApp } from './app.ts';
import { startDiscordInbound } from './discord/discord-inbound.ts';
import { createIngressDeps } from './ingress/accept-inbound.ts';
import { createGatewayMetrics } from './metrics/gateway-metrics.ts';
import { startTelegramPoller } from './telegram/telegram-poller.ts';
import { resolveSlackContext } from './slack-context.ts';

export interface RunningGateway {
  url: string;
  close(): Promise<void>;
}

/** Wires the gateway's clients, builds the app and listens. Used by main.ts and by tests in-process. */
export async function startGateway(config: GatewayConfig, log: Logger = createLogger('gateway', config.LOG_LEVEL)): Promise<RunningGateway> {
  // Read before anything is opened: a bad HOOKS_FILE is a ConfigError and the process does not start (main.ts).
  const hooks = config.HOOKS_FILE ? loadHooksFile(config.HOOKS_FILE) : undefined;
  if (hooks) log.info({ hooks: hooks.map((hook) => hook.name) }, 'triggered turns on (HOOKS_FILE)');
  const db = createDbClient(config.DATABASE_URL, { max: 20, applicationName: 'switchboard-gateway', ...databaseReach(config) });
  const redis = createRedisConnection(redisReachOf(config), 'producer');
  redis.on('error', (err) => log.warn({ err }, 'redis connection error'));
  const queue = createTurnQueue(redis, config.REDIS_PREFIX);
  queue.on('error', (err) => log.warn({ err }, 'queue error'));
  // Operators' schedules (POST /admin/schedules) are armed here; the workers run them.
  const schedules = createScheduleQueue(redis, config.REDIS_PREFIX);
  schedules.on('error', (err) => log.warn({ err }, 'schedule queue error'));

  const telegram = config.TELEGRAM_BOT_TOKEN ? await resolveTelegramContext(config, log) : undefined;
  if (!telegram) log.info('telegram is off (no TELEGRAM_BOT_TOKEN)');
  const slack = config.SLACK_SIGNING_SECRET ? await resolveSlackContext(config, log) : undefined;
  if (!slack) log.info('slack is off (no SLACK_SIGNING_SECRET)');

  const metrics = createGatewayMetrics({ queues: [queue], db: db.db, log });
  const app = await buildGatewayApp({ config, db: db.db, queue, schedules, redis, log, telegram, slack, metrics, ...(hooks ? { hooks } : {}) });
  const countRejected = metrics.countInboundRejected;
  const url = await app.listen({ host: config.HOST, port: config.PORT });
  log.info({ url }, 'gateway listening');
  // One Gateway connection per bot token across all gateway processes, decided by a Redis lease.
  const discord = config.DISCORD_BOT_TOKEN
    ? startDiscordInbound({ config, log, ingress: createIngressDeps(config, { db: db.db, queue, redis, log, countRejected }) })
    : undefined;
  if (!discord) log.info('discord gateway connection is off (no DISCORD_BOT_TOKEN)');
  // Long polling instead of the webhook: one poller per token across gateway processes, by a Redis lease.
  const pollerRedis = telegram && config.TELEGRAM_MODE === 'polling' ? createRedisConnection(redisReachOf(config), 'subscriber') : undefined;
  pollerRedis?.on('error', (err) => log.debug({ err }, 'telegram poller redis error'));
  const telegramPoller =
    telegram && pollerRedis
      ? startTelegramPoller({
          token: config.TELEGRAM_BOT_TOKEN as string,
          apiRoot: config.TELEGRAM_API_ROOT,
          context: telegram,
          ingress: createIngressDeps(config, { db: db.db, queue, redis, log, countRejected }),
          redis: pollerRedis,
          redisPrefix: config.REDIS_PREFIX,
          db: db.db,
          log,
        })
      : undefined;

  return {
    url,
    async close() {
      // Stop accepting first, then the queue, then Redis, then Postgres.
      await discord?.close();
      await telegramPoller?.close();
      pollerRedis?.disconnect();
      await app.close();
      // A gateway closed right after it started may still be setting the queue up on
      // this connection; disconnecting under it would leave an unhandled rejection.
      await queue.waitUntilReady().catch(() => undefined);
      await queue.close();
      await schedules.waitUntilReady().catch(() => undefined);
      await schedules.close();
      redis.disconnect();
      await db.close();
    },
  };
}

/**
 * The bot's username decides whether a group message mentions it. getMe is
 * asked once at start; if Telegram is unreachable the gateway still starts and
 * answers commands and replies to the bot in groups.
 */
async function resolveTelegramContext(config: GatewayConfig, log: Logger): Promise<TelegramParseContext> {
  const token = config.TELEGRAM_BOT_TOKEN as string;
  const context: TelegramParseContext = { botId: readTelegramBotId(token) };
  try {
    const api = new Api(token, { apiRoot: config.TELEGRAM_API_ROOT.replace(/\/+$/, ''), timeoutSeconds: 3 });
    const me = await api.getMe();
    context.botUsername = me.username;
  } catch (err) {
    log.warn({ err }, 'telegram getMe failed; group mentions by username are not recognised until restart');
  }
  return context;
}
