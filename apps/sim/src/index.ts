import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createLogger, scrubSecrets, type Logger } from '@switchboard/logger';
import { registerBodyParsers } from './body-parsers.ts';
import { registerDiscordControl } from './discord-control.ts';
import { DiscordGateway } from './discord-gateway.ts';
import { registerDiscordRest } from './discord-rest.ts';
import { DiscordStore } from './discord-store.ts';
import { classifyError } from './errors.ts';
import { EventHub } from './event-hub.ts';
import { registerEventStream } from './events-stream.ts';
import { errorWord } from './http-helpers.ts';
import { registerCompletions } from './model-completions.ts';
import { MediaStore, registerMediaRoutes } from './media-files.ts';
import { registerModelControl } from './model-control.ts';
import { ModelRequestStore } from './model-requests.ts';
import { ModelScriptRunner } from './model-script.ts';
import { registerSlackButtons } from './slack-buttons.ts';
import { registerSlackControl } from './slack-control.ts';
import { SlackStore } from './slack-store.ts';
import { registerSlackWebApi } from './slack-web-api.ts';
import { registerBotApi, sendTelegramError } from './telegram-bot-api.ts';
import { registerTelegramControl } from './telegram-control.ts';
import { TelegramStore } from './telegram-store.ts';
import { TelegramApiError } from './telegram-types.ts';

export type { SimEvent } from './event-hub.ts';
export type { ModelRequestRecord } from './model-requests.ts';
export type { ModelScript } from './model-script.ts';
export type { ChatActionRecord, SentRecord, TelegramUpdate } from './telegram-types.ts';
export type { SlackDeliveryAttempt, SlackEventEnvelope, SlackSentRecord } from './slack-types.ts';
export { slackWorkspace } from './slack-types.ts';
export type { DiscordSentRecord } from './discord-types.ts';
export type { GatewayState as DiscordGatewayState } from './discord-gateway.ts';
export { EventHub, simEventName } from './event-hub.ts';

export interface SimOptions {
  telegramBotToken?: string;
  telegramWebhookUrl?: string;
  telegramWebhookSecret?: string;
  /** Signs events POSTed to slackEventsUrl. */
  slackSigningSecret?: string;
  /** When set, Slack Web API calls with another token get invalid_auth. */
  slackBotToken?: string;
  /** The Slack app's Request URL (the gateway's /webhooks/slack/events); settable later via /control/slack/request-url. */
  slackEventsUrl?: string;
  /** How long the simulated Slack waits for an event's answer before retrying (Slack: 3 s). */
  slackAckTimeoutMs?: number;
  /** When set, Discord REST and Gateway calls with another token get 401 / close 4004. */
  discordBotToken?: string;
  /** The application id (also the bot user's id); a fixed sim id by default. */
  discordApplicationId?: string;
  /** The Interactions Endpoint URL (the gateway's /webhooks/discord/interactions); settable later via /control/discord/config. */
  discordInteractionsUrl?: string;
  /** Hello's heartbeat_interval in ms (Discord ~41250; tests use a few hundred). */
  discordHeartbeatIntervalMs?: number;
  logLevel?: string;
}

export interface SimState {
  telegram: TelegramStore;
  slack: SlackStore;
  model: { script: ModelScriptRunner; requests: ModelRequestStore };
  media: MediaStore;
  events: EventHub;
  discord: { store: DiscordStore; gateway: DiscordGateway };
}

export interface Sim {
  app: FastifyInstance;
  /** Starts listening (port 0 = any free port) and resolves with the base URL, e.g. http://127.0.0.1:4010. */
  listen(port?: number, host?: string): Promise<string>;
  /** Ends long polls and hanging model requests, then closes the server. Safe to call twice. */
  close(): Promise<void>;
  /** Clears every record, fault and script; counters keep increasing. Same as POST /control/reset. */
  reset(): void;
  /** The base URL once listening. */
  readonly url: string | undefined;
  /** The live stores, for in-process tests that want to await an event instead of polling HTTP. */
  state: SimState;
}

/** Model requests carry whole transcripts; 1 MiB would cut off a long conversation's context. */
const bodyLimitBytes = 16 * 1024 * 1024;

export async function createSim(options: SimOptions = {}): Promise<Sim> {
  const log = createLogger('sim', options.logLevel ?? 'info');
  const app = createServer(log);
  const shutdown = new AbortController();
  // Every in-flight request listens for shutdown; a load test holds hundreds at once.
  setMaxListeners(0, shutdown.signal);
  const state = createState(options);
  const reset = () => resetState(state);

  registerBodyParsers(app);
  app.addHook('onResponse', async (request, reply) => {
    request.log.debug({ method: request.method, url: scrubSecrets(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  app.setErrorHandler(renderControlError);
  app.setNotFoundHandler(renderNotFound);

  await registerPlatformApis(app, state, { shutdown: shutdown.signal, log });
  await app.register(async (scope) => registerControlRoutes(scope, state, options, { shutdown: shutdown.signal, reset }));
  return createHandle(app, state, reset, shutdown);
}

function createServer(log: Logger): FastifyInstance {
  return Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: bodyLimitBytes,
    // Request lines carry bot tokens; our own onResponse line scrubs them.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    routerOptions: { maxParamLength: 500 },
  });
}

/** Every store the simulated platforms and model keep, all publishing to one event hub. */
function createState(options: SimOptions): SimState {
  const events = new EventHub();
  const telegram = new TelegramStore(
    { botToken: options.telegramBotToken, webhookUrl: options.telegramWebhookUrl, webhookSecret: options.telegramWebhookSecret },
    events,
  );
  const slack = new SlackStore(
    { botToken: options.slackBotToken, signingSecret: options.slackSigningSecret, eventsUrl: options.slackEventsUrl, ackTimeoutMs: options.slackAckTimeoutMs },
    events,
  );
  const script = new ModelScriptRunner();
  const requests = new ModelRequestStore(events);
  const discord = new DiscordStore(
    {
      botToken: options.discordBotToken,
      applicationId: options.discordApplicationId,
      interactionsUrl: options.discordInteractionsUrl,
      heartbeatIntervalMs: options.discordHeartbeatIntervalMs,
    },
    events,
  );
  const discordGateway = new DiscordGateway(discord, events);
  const media = new MediaStore(events);
  return { telegram, slack, model: { script, requests }, media, events, discord: { store: discord, gateway: discordGateway } };
}

function resetState(state: SimState): void {
  state.media.reset();
  state.telegram.reset();
  state.slack.reset();
  state.discord.store.reset();
  state.model.script.reset();
  state.model.requests.clear();
  state.events.publish('sim.reset', null);
}

/** The APIs the bot and the agent call, each in its own scope with its own error shape. */
async function registerPlatformApis(app: FastifyInstance, state: SimState, context: { shutdown: AbortSignal; log: Logger }): Promise<void> {
  const { telegram, slack, media, events, discord } = state;
  const { script, requests } = state.model;
  const { shutdown, log } = context;
  await app.register(async (scope) => registerBotApi(scope, { store: telegram, media, hub: events, shutdown }));
  await app.register(async (scope) => registerSlackWebApi(scope, { store: slack, media, shutdown }));
  await app.register(async (scope) => registerCompletions(scope, { script, requests, shutdown, log }));
  await app.register(async (scope) => registerDiscordRest(scope, { store: discord.store, shutdown }), { prefix: '/api/v10' });
  discord.gateway.attach(app);
}

/** `/control/*` (what tests drive and read) and the file hosts. */
async function registerControlRoutes(scope: FastifyInstance, state: SimState, options: SimOptions, context: { shutdown: AbortSignal; reset: () => void }): Promise<void> {
  const { telegram, slack, media, events, discord } = state;
  const { script, requests } = state.model;
  const { shutdown, reset } = context;
  await registerTelegramControl(scope, { store: telegram, media, hub: events, shutdown });
  await registerSlackControl(scope, { store: slack, media, hub: events, shutdown });
  await registerSlackButtons(scope, { store: slack, hub: events, shutdown });
  await registerModelControl(scope, { script, requests, hub: events, shutdown });
  await registerDiscordControl(scope, { store: discord.store, media, gateway: discord.gateway, hub: events, shutdown });
  await registerEventStream(scope, events, shutdown);
  await registerMediaRoutes(scope, { media, telegramToken: options.telegramBotToken, slackToken: options.slackBotToken, shutdown });
  scope.get('/control/health', async () => ({ ok: true }));
  scope.post('/control/reset', async () => {
    reset();
    return { ok: true };
  });
}

function createHandle(app: FastifyInstance, state: SimState, reset: () => void, shutdown: AbortController): Sim {
  let url: string | undefined;
  let closing: Promise<void> | undefined;
  return {
    app,
    state,
    reset,
    get url() {
      return url;
    },
    async listen(port = 0, host = '127.0.0.1') {
      await app.listen({ port, host });
      const address = app.server.address() as AddressInfo;
      url = `http://${formatHost(host)}:${address.port}`;
      return url;
    },
    close() {
      closing ??= (async () => {
        shutdown.abort();
        await app.close();
      })();
      return closing;
    },
  };
}

// A wildcard bind is reached through loopback; IPv6 literals need brackets in URLs.
function formatHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function renderControlError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const { statusCode, code, message } = classifyError(error);
  if (statusCode >= 500) request.log.error({ err: error }, 'control request failed');
  return reply.code(statusCode).send({ error: errorWord(statusCode), code, message });
}

// Unknown paths answer in the shape of whichever API the caller was speaking.
function renderNotFound(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0] ?? '';
  if (path.startsWith('/bot')) return sendTelegramError(reply, new TelegramApiError(404, 'Not Found'));
  if (path.startsWith('/v1/') || path === '/chat/completions') {
    return reply.code(404).send({
      error: { message: `Unknown request URL: ${request.method} ${path}.`, type: 'invalid_request_error', param: null, code: 'unknown_url' },
    });
  }
  return reply.code(404).send({ error: 'not_found', code: 'SIM_NOT_FOUND', message: `no route ${request.method} ${path}` });
}
