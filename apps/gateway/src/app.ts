import { Api } from 'grammy';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { RedisClient } from '@switchboard/queue';
import type { GatewayConfig, HookConfig } from '@switchboard/config';
import type { Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { SlackParseContext, TelegramParseContext } from '@switchboard/platforms';
import { createScheduleQueue, type ScheduleQueue, type TurnQueue } from '@switchboard/queue';
import { registerAdmin } from './admin/register-admin.ts';
import { registerHooks } from './hooks/register-hooks.ts';
import { createGatewayMetrics, type GatewayMetrics } from './metrics/gateway-metrics.ts';
import { registerMetrics } from './metrics/register-metrics.ts';
import { registerDiscordInteractions } from './routes/discord-interactions.ts';
import { createIngressDeps } from './ingress/accept-inbound.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerSlackEvents } from './routes/slack-events.ts';
import { registerTelegramWebhook } from './routes/telegram-webhook.ts';

export interface GatewayDeps {
  config: GatewayConfig;
  db: Database;
  queue: TurnQueue;
  /** The `schedules` queue the admin API arms operators' schedules in; absent: the app makes its own on `redis`, closed with it. */
  schedules?: ScheduleQueue;
  /** A fail-fast connection, used for readiness. */
  redis: RedisClient;
  log: Logger;
  telegram?: TelegramParseContext;
  /** Who the Slack bot is (auth.test); the route is on whenever SLACK_SIGNING_SECRET is set. */
  slack?: SlackParseContext;
  /** Shared with the Discord connection and the Telegram poller, so their rejections are counted on this app's /metrics. */
  metrics?: GatewayMetrics;
  /** HOOKS_FILE as read at start (loadHooksFile); absent: no /hooks route at all. */
  hooks?: readonly HookConfig[];
}

export async function buildGatewayApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: deps.config.BODY_LIMIT_BYTES,
    // Per-request logs cost more than the ingress itself at load; errors and rejections are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    // Behind a TLS proxy, request.ip, .protocol and .host are the client's (TRUST_PROXY, docs/admin.md).
    trustProxy: toFastifyTrustProxy(deps.config.TRUST_PROXY),
  });

  // One error handler: the client learns the status, never the internals.
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (status >= 500) request.log.error({ err: error, url: request.routeOptions.url }, 'request failed');
    else request.log.warn({ code: error.code, url: request.routeOptions.url, reason: error.message }, 'request rejected');
    return reply.code(status).send({ ok: false, error: status >= 500 ? 'internal_error' : (error.code ?? 'bad_request'), message: status >= 500 ? undefined : error.message });
  });

  // Before the webhook routes, so its onSend hook counts every one of them.
  const metrics = deps.metrics ?? createGatewayMetrics({ queues: [deps.queue], db: deps.db, log: deps.log });
  registerMetrics(app, metrics);
  registerHealthRoutes(app, deps);
  const ingress = createIngressDeps(deps.config, { db: deps.db, queue: deps.queue, redis: deps.redis, log: deps.log, countRejected: metrics.countInboundRejected });
  if (deps.telegram && deps.config.TELEGRAM_WEBHOOK_SECRET) {
    // Answers button presses inside the webhook request: a short timeout, so an unreachable Bot API never holds Telegram's delivery.
    const api = new Api(deps.config.TELEGRAM_BOT_TOKEN ?? '', { apiRoot: deps.config.TELEGRAM_API_ROOT.replace(/\/+$/, ''), timeoutSeconds: 5 });
    registerTelegramWebhook(app, ingress, { secret: deps.config.TELEGRAM_WEBHOOK_SECRET, context: deps.telegram, api });
  }
  if (deps.config.SLACK_SIGNING_SECRET) {
    await registerSlackEvents(app, ingress, { signingSecret: deps.config.SLACK_SIGNING_SECRET, context: deps.slack ?? {} });
  }
  if (deps.config.DISCORD_PUBLIC_KEY) {
    await registerDiscordInteractions(app, ingress, { publicKey: deps.config.DISCORD_PUBLIC_KEY, applicationId: deps.config.DISCORD_APPLICATION_ID });
  }
  if (deps.hooks) await registerHooks(app, ingress, deps.hooks);
  const schedules = deps.schedules ?? ownScheduleQueue(app, deps);
  await registerAdmin(app, { config: deps.config, db: deps.db, queue: deps.queue, schedules, redis: deps.redis, log: deps.log, metrics });
  return app;
}

function ownScheduleQueue(app: FastifyInstance, deps: GatewayDeps): ScheduleQueue {
  const schedules = createScheduleQueue(deps.redis, deps.config.REDIS_PREFIX);
  schedules.on('error', (err) => deps.log.warn({ err }, 'schedule queue error'));
  app.addHook('onClose', async () => {
    await schedules.waitUntilReady().catch(() => undefined);
    await schedules.close();
  });
  return schedules;
}

/**
 * TRUST_PROXY as Fastify takes it. Fastify 5 answers a bare hop count by
 * trusting nobody (fastify/lib/request.js: a direct client could claim any
 * number of hops), which would leave a configured count silently doing
 * nothing; the count becomes the function Express uses instead: the nearest
 * n hops are proxies. docs/admin.md says when a count is safe.
 */
function toFastifyTrustProxy(setting: GatewayConfig['TRUST_PROXY']): FastifyServerOptions['trustProxy'] {
  if (typeof setting !== 'number') return setting;
  return (_address: string, hop: number) => hop < setting;
}
