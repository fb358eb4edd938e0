import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sleepUnlessAborted } from './abortable.ts';
import { classifyError } from './errors.ts';
import type { DiscordStore, InteractionState } from './discord-store.ts';
import { DiscordApiError, type DiscordFaultRoute, type DiscordMessage, type DiscordMessageReference, type DiscordSentRecord } from './discord-types.ts';
import { watchClient } from './http-helpers.ts';

export interface DiscordRestDeps {
  store: DiscordStore;
  shutdown: AbortSignal;
}

interface Guard {
  /** Needs `Authorization: Bot <token>` (webhook routes authenticate by their token instead). */
  auth: boolean;
  fault: Exclude<DiscordFaultRoute, '*'>;
  bucket: string;
  major: (request: FastifyRequest) => string;
}

const contentLimit = 2000;
const nonceLimit = 25;

/**
 * Discord REST v10 under `/api/v10` (Discord REST docs): the routes the
 * adapter and @discordjs/ws use, with Bot auth, rate-limit headers on every
 * answer (@discordjs/rest reads them), Discord's error JSON, nonces with
 * enforce_nonce, and fault switches.
 */
export async function registerDiscordRest(app: FastifyInstance, deps: DiscordRestDeps): Promise<void> {
  const { store, shutdown } = deps;

  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof DiscordApiError) return sendDiscordError(reply, error);
    const { statusCode, message } = classifyError(error);
    if (statusCode < 500) return sendDiscordError(reply, new DiscordApiError(400, 50109, `The request body contains invalid JSON. ${message}`));
    return sendDiscordError(reply, new DiscordApiError(500, 0, '500: Internal Server Error'));
  });
  app.setNotFoundHandler((_request, reply) => sendDiscordError(reply, new DiscordApiError(404, 0, '404: Not Found')));

  /** Auth, faults, then the bucket; true when the answer was already sent. */
  async function guard(request: FastifyRequest, reply: FastifyReply, spec: Guard): Promise<boolean> {
    if (spec.auth && !store.isAuthorised(request.headers.authorization)) {
      sendDiscordError(reply, new DiscordApiError(401, 0, '401: Unauthorized'));
      return true;
    }
    const fault = store.takeFault(spec.fault);
    if (fault?.kind === 'delay') {
      const { signal } = watchClient(reply, shutdown);
      await sleepUnlessAborted(fault.delayMs, signal);
    } else if (fault?.kind === '429') {
      sendRateLimited(reply, fault.retryAfter, store.takeBucket(spec.bucket, spec.major(request)).headers);
      return true;
    } else if (fault) {
      sendDiscordError(reply, new DiscordApiError(fault.status, 0, `${fault.status}: ${fault.status === 500 ? 'Internal Server Error' : 'Service Unavailable'}`));
      return true;
    }
    const bucket = store.takeBucket(spec.bucket, spec.major(request));
    void reply.headers(bucket.headers);
    if (bucket.limited) {
      sendRateLimited(reply, bucket.retryAfterSeconds, bucket.headers);
      return true;
    }
    return false;
  }

  app.get('/gateway', async (request) => ({ url: gatewayUrl(request) }));

  app.get('/gateway/bot', async (request, reply) => {
    if (await guard(request, reply, { auth: true, fault: 'gateway', bucket: 'gateway/bot', major: () => 'global' })) return reply;
    return {
      url: gatewayUrl(request),
      shards: 1,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 },
    };
  });

  // '@me' and '@original' are route parameters: @discordjs/rest sends them percent-encoded (%40me).
  app.get<{ Params: { userId: string } }>('/users/:userId', async (request, reply) => {
    if (await guard(request, reply, { auth: true, fault: 'users', bucket: 'users', major: () => 'global' })) return reply;
    if (request.params.userId !== '@me' && request.params.userId !== store.botUser.id) throw new DiscordApiError(404, 10013, 'Unknown User');
    return { ...store.botUser, verified: true, flags: 0, mfa_enabled: false };
  });

  app.get<{ Params: { applicationId: string } }>('/applications/:applicationId', async (request, reply) => {
    if (await guard(request, reply, { auth: true, fault: 'users', bucket: 'applications', major: () => 'global' })) return reply;
    if (request.params.applicationId !== '@me') throw new DiscordApiError(404, 10002, 'Unknown Application');
    return { id: store.applicationId, name: 'Switchboard Sim', verify_key: store.publicKeyHex, bot: store.botUser, flags: 0 };
  });

  // Bulk overwrite of global commands: accepted and echoed with ids; the sim sends whatever command a test names.
  app.put<{ Params: { applicationId: string } }>('/applications/:applicationId/commands', async (request, reply) => {
    if (await guard(request, reply, { auth: true, fault: 'users', bucket: 'applications/commands', major: () => 'global' })) return reply;
    if (request.params.applicationId !== store.applicationId) throw new DiscordApiError(403, 50001, 'Missing Access');
    if (!Array.isArray(request.body)) throw new DiscordApiError(400, 50035, 'Invalid Form Body');
    return (request.body as Record<string, unknown>[]).map((command) => ({ ...command, id: store.nextId(), application_id: store.applicationId, type: command.type ?? 1, version: store.nextId() }));
  });

  app.post<{ Params: { channelId: string } }>('/channels/:channelId/messages', async (request, reply) => {
    const major = (r: FastifyRequest) => (r.params as { channelId: string }).channelId;
    if (await guard(request, reply, { auth: true, fault: 'messages', bucket: 'channels/messages', major })) return reply;
    const channelId = request.params.channelId;
    const body = readMessageBody(request.body);
    if (body.enforce_nonce === true && body.nonce !== undefined) {
      const existing = store.findByNonce(body.nonce);
      // The message made the first time, and no second one (Discord's enforce_nonce).
      if (existing) return toMessage(store, existing);
    }
    const reference = body.message_reference;
    if (reference?.message_id !== undefined && !store.findMessage(reference.message_id) && reference.fail_if_not_exists !== false) {
      throw invalidForm('message_reference', 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message');
    }
    const record: DiscordSentRecord = {
      id: store.nextId(),
      channel_id: channelId,
      content: body.content,
      ...(body.nonce !== undefined ? { nonce: body.nonce } : {}),
      ...(reference ? { message_reference: { ...reference, channel_id: reference.channel_id ?? channelId } } : {}),
      ...(body.components ? { components: body.components } : {}),
      sentAt: Date.now(),
    };
    store.recordSent(record);
    const message = toMessage(store, record);
    store.rememberMessage(message);
    return message;
  });

  // Edit Message: only the bot's own messages; `components` replaces the buttons (an empty list removes them).
  app.patch<{ Params: { channelId: string; messageId: string } }>('/channels/:channelId/messages/:messageId', async (request, reply) => {
    const major = (r: FastifyRequest) => (r.params as { channelId: string }).channelId;
    if (await guard(request, reply, { auth: true, fault: 'edits', bucket: 'channels/messages/edit', major })) return reply;
    const record = store.sentTo(request.params.channelId).find((r) => r.id === request.params.messageId);
    if (!record) throw new DiscordApiError(404, 10008, 'Unknown Message');
    const body = readMessageBody(request.body);
    if (body.components) record.components = body.components;
    store.recordEdit(record, body.content);
    return toMessage(store, record);
  });

  app.post<{ Params: { channelId: string } }>('/channels/:channelId/typing', async (request, reply) => {
    const major = (r: FastifyRequest) => (r.params as { channelId: string }).channelId;
    if (await guard(request, reply, { auth: true, fault: 'typing', bucket: 'channels/typing', major })) return reply;
    store.recordTyping(request.params.channelId);
    return reply.code(204).send();
  });

  // Create / Delete Own Reaction ('@me' may come percent-encoded; the emoji comes URL-encoded and is decoded by the router).
  interface ReactionRoute {
    Params: { channelId: string; messageId: string; emoji: string; user: string };
  }
  const reactionUrl = '/channels/:channelId/messages/:messageId/reactions/:emoji/:user';
  const reactionGuard = { auth: true, fault: 'reactions', bucket: 'channels/messages/reactions', major: (r: FastifyRequest) => (r.params as { channelId: string }).channelId } as const;
  app.put<ReactionRoute>(reactionUrl, async (request, reply) => {
    if (await guard(request, reply, reactionGuard)) return reply;
    const { channelId, messageId, emoji, user } = request.params;
    if (user !== '@me') throw new DiscordApiError(404, 0, '404: Not Found');
    if (emoji === '') throw new DiscordApiError(400, 10014, 'Unknown Emoji');
    store.reactions.add(`${channelId}:${messageId}`, emoji);
    return reply.code(204).send();
  });
  app.delete<ReactionRoute>(reactionUrl, async (request, reply) => {
    if (await guard(request, reply, reactionGuard)) return reply;
    const { channelId, messageId, emoji, user } = request.params;
    if (user !== '@me') throw new DiscordApiError(404, 0, '404: Not Found');
    store.reactions.remove(`${channelId}:${messageId}`, emoji);
    return reply.code(204).send();
  });

  interface WebhookRoute {
    Params: { appId: string; token: string };
  }
  interface WebhookMessageRoute {
    Params: { appId: string; token: string; messageId: string };
  }
  const webhookMajor = (r: FastifyRequest) => (r.params as { token: string }).token;

  // Interaction follow-up: a new message through the interaction's webhook.
  app.post<WebhookRoute>('/webhooks/:appId/:token', async (request, reply) => {
    if (await guard(request, reply, { auth: false, fault: 'followup', bucket: 'webhooks', major: webhookMajor })) return reply;
    const interaction = findInteraction(store, request.params);
    const body = readMessageBody(request.body);
    const record: DiscordSentRecord = { id: store.nextId(), channel_id: interaction.channelId, content: body.content, followup: true, interaction_id: interaction.id, sentAt: Date.now() };
    store.recordSent(record);
    const message = toMessage(store, record);
    store.rememberMessage(message);
    return message;
  });

  // Editing the original response: after a deferred answer (type 5) this is what replaces "thinking…".
  app.patch<WebhookMessageRoute>('/webhooks/:appId/:token/messages/:messageId', async (request, reply) => {
    if (await guard(request, reply, { auth: false, fault: 'followup', bucket: 'webhooks', major: webhookMajor })) return reply;
    const interaction = findInteraction(store, request.params);
    if (request.params.messageId !== '@original') return editFollowup(store, interaction, request.params.messageId, readMessageBody(request.body).content);
    if (interaction.responseType === undefined) throw new DiscordApiError(404, 10008, 'Unknown Message');
    const body = readMessageBody(request.body);
    if (interaction.original) {
      store.recordEdit(interaction.original, body.content);
      return toMessage(store, interaction.original);
    }
    const record: DiscordSentRecord = {
      id: store.nextId(),
      channel_id: interaction.channelId,
      content: body.content,
      followup: true,
      original: true,
      interaction_id: interaction.id,
      sentAt: Date.now(),
    };
    interaction.original = record;
    store.recordSent(record);
    const message = toMessage(store, record);
    store.rememberMessage(message);
    return message;
  });

  app.get<WebhookMessageRoute>('/webhooks/:appId/:token/messages/:messageId', async (request) => {
    const interaction = findInteraction(store, request.params);
    const record = request.params.messageId === '@original' ? interaction.original : store.sentTo(interaction.channelId).find((r) => r.id === request.params.messageId);
    if (!record || record.interaction_id !== interaction.id) throw new DiscordApiError(404, 10008, 'Unknown Message');
    return toMessage(store, record);
  });
}

function editFollowup(store: DiscordStore, interaction: InteractionState, messageId: string, content: string): DiscordMessage {
  const record = store.sentTo(interaction.channelId).find((r) => r.id === messageId && r.interaction_id === interaction.id);
  if (!record) throw new DiscordApiError(404, 10008, 'Unknown Message');
  store.recordEdit(record, content);
  return toMessage(store, record);
}

function gatewayUrl(request: FastifyRequest): string {
  return `ws://${request.headers.host ?? '127.0.0.1'}/discord-gateway`;
}

function findInteraction(store: DiscordStore, params: { appId: string; token: string }): InteractionState {
  const interaction = store.findInteraction(params.appId, params.token);
  if (!interaction) throw new DiscordApiError(404, 10015, 'Unknown Webhook');
  return interaction;
}

interface MessageBody {
  content: string;
  components?: unknown[];
  nonce?: string | number;
  enforce_nonce?: boolean;
  message_reference?: DiscordMessageReference;
}

/** The subset of "Create Message" the sim understands, validated with Discord's error codes. */
function readMessageBody(raw: unknown): MessageBody {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new DiscordApiError(400, 50109, 'The request body contains invalid JSON.');
  const body = raw as Record<string, unknown>;
  const content = body.content ?? '';
  if (typeof content !== 'string') throw invalidForm('content', 'STRING_TYPE_CONVERT', 'Could not interpret "content" as string.');
  const hasEmbeds = Array.isArray(body.embeds) && body.embeds.length > 0;
  if (content.trim() === '' && !hasEmbeds) throw new DiscordApiError(400, 50006, 'Cannot send an empty message');
  // Discord counts characters, not UTF-16 units.
  if ([...content].length > contentLimit) throw invalidForm('content', 'BASE_TYPE_MAX_LENGTH', `Must be ${contentLimit} or fewer in length.`);
  const nonce = body.nonce;
  if (nonce !== undefined && nonce !== null) {
    const valid = (typeof nonce === 'string' && nonce.length <= nonceLimit) || (typeof nonce === 'number' && Number.isInteger(nonce));
    if (!valid) throw invalidForm('nonce', 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${nonceLimit} in length.`);
  }
  const reference = body.message_reference;
  if (reference !== undefined && reference !== null && (typeof reference !== 'object' || Array.isArray(reference))) {
    throw invalidForm('message_reference', 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
  }
  const components = readComponents(body.components);
  return {
    content,
    ...(components ? { components } : {}),
    ...(nonce !== undefined && nonce !== null ? { nonce: nonce as string | number } : {}),
    ...(body.enforce_nonce === true ? { enforce_nonce: true } : {}),
    ...(reference ? { message_reference: normaliseReference(reference as Record<string, unknown>) } : {}),
  };
}

/** Action rows of buttons; a custom_id is 1-100 characters (Discord message components docs). */
function readComponents(raw: unknown): unknown[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw invalidForm('components', 'BASE_TYPE_BAD_TYPE', 'Must be an array.');
  for (const row of raw as { components?: { custom_id?: unknown }[] }[]) {
    for (const component of row.components ?? []) {
      const id = component.custom_id;
      if (id !== undefined && (typeof id !== 'string' || id.length < 1 || id.length > 100)) throw invalidForm('components', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    }
  }
  return raw;
}

function normaliseReference(reference: Record<string, unknown>): DiscordMessageReference {
  const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : undefined);
  const messageId = text(reference.message_id);
  const channelId = text(reference.channel_id);
  const guildId = text(reference.guild_id);
  return {
    ...(messageId ? { message_id: messageId } : {}),
    ...(channelId ? { channel_id: channelId } : {}),
    ...(guildId ? { guild_id: guildId } : {}),
    ...(typeof reference.fail_if_not_exists === 'boolean' ? { fail_if_not_exists: reference.fail_if_not_exists } : {}),
  };
}

function invalidForm(field: string, code: string, message: string): DiscordApiError {
  return new DiscordApiError(400, 50035, 'Invalid Form Body', { [field]: { _errors: [{ code, message }] } });
}

export function toMessage(store: DiscordStore, record: DiscordSentRecord): DiscordMessage {
  return {
    id: record.id,
    channel_id: record.channel_id,
    author: store.botUser,
    content: record.content,
    timestamp: new Date(record.sentAt).toISOString(),
    edited_timestamp: record.editedAt ? new Date(record.editedAt).toISOString() : null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    type: record.message_reference ? 19 : record.interaction_id ? 20 : 0,
    ...(record.nonce !== undefined ? { nonce: record.nonce } : {}),
    ...(record.message_reference ? { message_reference: record.message_reference } : {}),
    ...(record.components ? { components: record.components } : {}),
    ...(record.followup ? { webhook_id: store.applicationId, application_id: store.applicationId } : {}),
  };
}

function sendRateLimited(reply: FastifyReply, retryAfterSeconds: number, headers: Record<string, string>): FastifyReply {
  const retryAfter = Math.max(0, retryAfterSeconds);
  return reply
    .code(429)
    .headers({
      ...headers,
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset-after': retryAfter.toFixed(3),
      'x-ratelimit-scope': 'user',
      // Whole seconds in the header, the exact figure in the body, as Discord sends them.
      'retry-after': String(Math.max(1, Math.ceil(retryAfter))),
    })
    .send({ message: 'You are being rate limited.', retry_after: Math.round(retryAfter * 1000) / 1000, global: false });
}

export function sendDiscordError(reply: FastifyReply, error: DiscordApiError): FastifyReply {
  return reply.code(error.status).send({ message: error.message, code: error.code, ...(error.errors ? { errors: error.errors } : {}) });
}
