import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { waitUntil } from './abortable.ts';
import type { DiscordGateway, GatewayAction, GatewayState } from './discord-gateway.ts';
import { sendInteraction } from './discord-interactions.ts';
import type { DiscordStore } from './discord-store.ts';
import type { DiscordMessage, DiscordSentRecord } from './discord-types.ts';
import { SimError } from './errors.ts';
import { simEventName, type EventHub } from './event-hub.ts';
import { readIntQuery, watchClient } from './http-helpers.ts';
import { baseUrlOf, discordAttachmentUrl, requireFile, type MediaStore, type SimFile } from './media-files.ts';
import { parseBody } from './parse-body.ts';

export interface DiscordControlDeps {
  store: DiscordStore;
  gateway: DiscordGateway;
  hub: EventHub;
  shutdown: AbortSignal;
  media?: MediaStore;
}

const snowflake = z.string().regex(/^\d{1,20}$/, 'must be a snowflake (digits)');

const messageSchema = z
  .object({
    channel_id: snowflake,
    guild_id: snowflake.optional(),
    author: z.object({ id: snowflake, username: z.string().min(1).default('sim-user'), bot: z.boolean().optional() }).strict(),
    content: z.string(),
    mentions_bot: z.boolean().default(false),
    /** Reuse an id to make Discord send the same message again. */
    id: snowflake.optional(),
    /** 0 guild text, 1 DM, 11 public thread; defaults from guild_id. */
    channel_type: z.number().int().min(0).optional(),
    type: z.number().int().min(0).optional(),
    referenced_message_id: snowflake.optional(),
    /** The author's guild roles (guild messages only). */
    member_roles: z.array(snowflake).optional(),
    /** Files by their sim id (POST /control/media/files), as Discord attachments served from the sim's CDN path. */
    attachments: z.array(z.string().min(1)).optional(),
    /** A voice message (flag IS_VOICE_MESSAGE): its one attachment is the recording. */
    voice: z.boolean().optional(),
  })
  .strict();

const gatewayActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('stop-acks') }).strict(),
  z.object({ action: z.literal('resume-acks') }).strict(),
  z.object({ action: z.literal('reconnect') }).strict(),
  z.object({ action: z.literal('invalid-session'), resumable: z.boolean().optional() }).strict(),
  z.object({ action: z.literal('drop'), replay_from: z.number().int().nonnegative().optional() }).strict(),
  z.object({ action: z.literal('close'), code: z.number().int().min(1000).max(4999) }).strict(),
  z.object({ action: z.literal('request-heartbeat') }).strict(),
]);

const interactionSchema = z
  .object({
    name: z.string().min(1).max(32).optional(),
    options: z
      .array(z.object({ name: z.string().min(1), value: z.union([z.string(), z.number(), z.boolean()]), type: z.number().int().optional() }).strict())
      .optional(),
    channel_id: snowflake,
    guild_id: snowflake.optional(),
    /** A group DM (a user-installed app used among friends): channel type 3, interaction context 2 (PRIVATE_CHANNEL). */
    group_dm: z.boolean().optional(),
    user: z.object({ id: snowflake, username: z.string().min(1).default('sim-user') }).strict(),
    member_roles: z.array(snowflake).optional(),
    signing: z.enum(['valid', 'bad', 'none']).default('valid'),
    ping: z.boolean().optional(),
    id: snowflake.optional(),
    url: z.string().url().optional(),
    /** Press a button under the bot's message (by custom_id or label) instead of running a slash command. */
    component: z.object({ message_id: snowflake, custom_id: z.string().min(1).optional(), label: z.string().min(1).optional() }).strict().optional(),
  })
  .strict();

const faultSchema = z
  .object({
    route: z.enum(['messages', 'edits', 'typing', 'reactions', 'followup', 'gateway', 'users', '*']),
    kind: z.enum(['429', '500', '502', '503', 'delay']),
    times: z.number().int().positive().default(1),
    /** Seconds, as Discord's retry_after. */
    retryAfter: z.number().positive().default(1),
    delayMs: z.number().int().nonnegative().max(300_000).default(1000),
  })
  .strict();

const configSchema = z.object({ interactions_url: z.string().url().nullable() }).strict();

const maxWaitMs = 300_000;
type Query = Record<string, unknown>;

/** `/control/discord/*`: act as Discord users, drive the Gateway, read what the bot did, arm faults. */
export async function registerDiscordControl(app: FastifyInstance, deps: DiscordControlDeps): Promise<void> {
  registerAppRoutes(app, deps.store);
  registerUserActionRoutes(app, deps);
  registerGatewayRoutes(app, deps);
  registerDiscordReadingRoutes(app, deps);
  registerDiscordFaultRoutes(app, deps.store);
}

/** The application as Discord knows it: its key, its bot user, its Interactions Endpoint URL. */
function registerAppRoutes(app: FastifyInstance, store: DiscordStore): void {
  app.get('/control/discord/public-key', async () => ({ public_key: store.publicKeyHex, application_id: store.applicationId }));

  app.get('/control/discord/bot', async () => ({ user: store.botUser, application_id: store.applicationId, public_key: store.publicKeyHex }));

  app.post('/control/discord/config', async (request) => {
    const input = parseBody(configSchema, request.body);
    store.interactionsUrl = input.interactions_url ?? undefined;
    return { ok: true, interactions_url: store.interactionsUrl ?? null };
  });
}

/** What a Discord user does: post a message (sent over the Gateway), run a slash command or press a button (POSTed as an interaction). */
function registerUserActionRoutes(app: FastifyInstance, deps: DiscordControlDeps): void {
  const { store, gateway } = deps;

  app.post('/control/discord/messages', async (request) => {
    const input = parseBody(messageSchema, request.body);
    const message = buildMessage(store, input);
    const media = deps.media;
    if (input.attachments && media) {
      const where = { base: baseUrlOf(request), channelId: input.channel_id, voice: input.voice === true };
      message.attachments = input.attachments.map((id) => discordAttachment(requireFile(media, id), where));
      if (input.voice) Object.assign(message, { flags: 1 << 13 });
    }
    store.rememberMessage(message);
    const result = gateway.dispatch('MESSAGE_CREATE', message);
    return { message, ...result };
  });

  app.post('/control/discord/interactions', async (request) => {
    const input = parseBody(interactionSchema, request.body);
    const url = input.url ?? store.interactionsUrl;
    if (!url) throw new SimError('SIM_NO_INTERACTIONS_URL', 'no Interactions Endpoint URL is set (createSim discordInteractionsUrl or POST /control/discord/config)', 409);
    return sendInteraction(deps, url, input);
  });
}

/** The Gateway connection: its state, the actions a test plays on it, and a long poll for its figures. */
function registerGatewayRoutes(app: FastifyInstance, deps: DiscordControlDeps): void {
  const { gateway, hub, shutdown } = deps;

  app.get('/control/discord/gateway', async () => gateway.state());

  app.post('/control/discord/gateway', async (request) => {
    const command = parseBody(gatewayActionSchema, request.body) as GatewayAction;
    const result = gateway.control(command);
    if (!result.ok) throw new SimError('SIM_NO_CONNECTION', result.message ?? 'no connection', 409);
    return { ok: true, state: gateway.state() };
  });

  // Long-polls until every given figure is reached: identifies, resumes, connections, heartbeats (at least), connected (equal).
  app.get('/control/discord/gateway/wait', async (request, reply) => {
    const query = request.query as Query;
    const timeoutMs = readIntQuery(query, 'timeout_ms', { fallback: 10_000, min: 0, max: maxWaitMs }) as number;
    const atLeast = (['identifies', 'resumes', 'connections', 'heartbeats'] as const).flatMap((name) => {
      const value = readIntQuery(query, name, { min: 0 });
      return value === undefined ? [] : [[name, value] as const];
    });
    const connected = query.connected === undefined ? undefined : query.connected === 'true';
    const { signal } = watchClient(reply, shutdown);
    const check = (): GatewayState | undefined => {
      const state = gateway.state();
      if (connected !== undefined && state.connected !== connected) return undefined;
      return atLeast.every(([name, value]) => state[name] >= value) ? state : undefined;
    };
    const state = await waitUntil(check, { emitter: hub, eventName: simEventName, timeoutMs, signal });
    if (state) return state;
    return reply.code(408).send({ error: 'timeout', code: 'SIM_WAIT_TIMEOUT', state: gateway.state() });
  });
}

/** What the bot did: messages sent (and a long poll for the next ones), typing, reactions. */
function registerDiscordReadingRoutes(app: FastifyInstance, deps: DiscordControlDeps): void {
  const { store, hub, shutdown } = deps;

  app.get('/control/discord/sent', async (request) => selectSent(store, request.query as Query));

  app.get('/control/discord/wait', async (request, reply) => {
    const query = request.query as Query;
    const count = readIntQuery(query, 'count', { fallback: 1, min: 1 }) as number;
    const timeoutMs = readIntQuery(query, 'timeout_ms', { fallback: 10_000, min: 0, max: maxWaitMs }) as number;
    const channelId = readChannel(query);
    const { signal } = watchClient(reply, shutdown);
    const check = () => (store.sentTo(channelId).length >= count ? selectSent(store, query) : undefined);
    const sent = await waitUntil(check, { emitter: hub, eventName: simEventName, timeoutMs, signal });
    if (sent) return sent;
    return reply.code(408).send({ error: 'timeout', code: 'SIM_WAIT_TIMEOUT', sent: selectSent(store, query) });
  });

  app.get('/control/discord/typing', async (request) => {
    const channelId = readChannel(request.query as Query);
    return channelId === undefined ? store.typing : store.typing.filter((record) => record.channel_id === channelId);
  });

  // The bot's reactions on one message now (Create/Delete Own Reaction), and how many reaction calls were accepted in all.
  app.get('/control/discord/reactions', async (request) => {
    const query = request.query as Record<string, unknown>;
    const key = `${String(query.channel_id ?? '')}:${String(query.message_id ?? '')}`;
    return { emoji: store.reactions.on(key), calls: store.reactions.calls, all: store.reactions.all() };
  });
}

/** Route-keyed REST faults (Discord's are per route, not per method as on Telegram and Slack). */
function registerDiscordFaultRoutes(app: FastifyInstance, store: DiscordStore): void {
  app.get('/control/discord/faults', async () => store.faults);

  app.post('/control/discord/faults', async (request) => {
    const fault = parseBody(faultSchema, request.body);
    const kind = fault.kind === 'delay' || fault.kind === '429' ? fault.kind : '5xx';
    store.faults.push({
      route: fault.route,
      kind,
      status: kind === '5xx' ? Number(fault.kind) : kind === '429' ? 429 : 200,
      remaining: fault.times,
      retryAfter: fault.retryAfter,
      delayMs: fault.delayMs,
    });
    return { ok: true, faults: store.faults };
  });

  app.delete('/control/discord/faults', async () => {
    store.faults = [];
    return { ok: true };
  });
}

function buildMessage(store: DiscordStore, input: z.output<typeof messageSchema>): DiscordMessage {
  const inGuild = input.guild_id !== undefined;
  const author = { id: input.author.id, username: input.author.username, discriminator: '0', global_name: input.author.username, avatar: null, ...(input.author.bot ? { bot: true } : {}) };
  const referenced = input.referenced_message_id ? (store.findMessage(input.referenced_message_id) ?? null) : undefined;
  return {
    id: input.id ?? store.nextId(),
    channel_id: input.channel_id,
    ...(inGuild ? { guild_id: input.guild_id, member: { roles: input.member_roles ?? [], joined_at: new Date(0).toISOString() } } : {}),
    author,
    content: input.content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: input.mentions_bot ? [store.botUser] : [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    type: input.type ?? (referenced !== undefined ? 19 : 0),
    ...(referenced !== undefined
      ? { message_reference: { message_id: input.referenced_message_id, channel_id: input.channel_id, ...(inGuild ? { guild_id: input.guild_id } : {}) }, referenced_message: referenced }
      : {}),
    channel_type: input.channel_type ?? (inGuild ? 0 : 1),
  };
}

/** Discord's attachment object (a voice message's carries duration_secs and waveform). */
function discordAttachment(file: SimFile, where: { base: string; channelId: string; voice: boolean }): Record<string, unknown> {
  const { base, channelId, voice } = where;
  return {
    id: file.id.replace(/\D/g, '') || '1',
    filename: file.name,
    content_type: file.mime,
    size: file.announcedSize,
    url: discordAttachmentUrl(base, channelId, file),
    proxy_url: discordAttachmentUrl(base, channelId, file),
    ...(voice ? { duration_secs: 3, waveform: 'AAAA' } : {}),
  };
}

function readChannel(query: Query): string | undefined {
  const raw = query.channel_id;
  return raw === undefined || raw === '' ? undefined : String(raw);
}

function selectSent(store: DiscordStore, query: Query): DiscordSentRecord[] {
  return [...store.sentTo(readChannel(query))];
}
