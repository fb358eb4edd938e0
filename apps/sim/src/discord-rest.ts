import type { FastifyInstance, FastifyRequest } from 'fastify';
import { classifyError } from './errors.ts';
import { invalidForm, readMessageBody, recordNewMessage, toMessage } from './discord-message-wire.ts';
import { channelMajor, guardRoute, sendDiscordError, type DiscordRestDeps, type RouteGuard } from './discord-rest-guard.ts';
import type { DiscordStore } from './discord-store.ts';
import { DiscordApiError, type DiscordMessage, type DiscordSentRecord } from './discord-types.ts';
import { registerInteractionWebhookRoutes } from './discord-webhook-routes.ts';

export type { DiscordRestDeps } from './discord-rest-guard.ts';

/**
 * Discord REST v10 under `/api/v10` (Discord REST docs): the routes the
 * adapter and @discordjs/ws use, with Bot auth, rate-limit headers on every
 * answer (@discordjs/rest reads them), Discord's error JSON, nonces with
 * enforce_nonce, and fault switches.
 */
export async function registerDiscordRest(app: FastifyInstance, deps: DiscordRestDeps): Promise<void> {
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof DiscordApiError) return sendDiscordError(reply, error);
    const { statusCode, message } = classifyError(error);
    if (statusCode < 500) return sendDiscordError(reply, new DiscordApiError(400, 50109, `The request body contains invalid JSON. ${message}`));
    return sendDiscordError(reply, new DiscordApiError(500, 0, '500: Internal Server Error'));
  });
  app.setNotFoundHandler((_request, reply) => sendDiscordError(reply, new DiscordApiError(404, 0, '404: Not Found')));

  registerApplicationRoutes(app, deps);
  registerChannelMessageRoutes(app, deps);
  registerReactionRoutes(app, deps);
  registerInteractionWebhookRoutes(app, deps);
}

/** Where the Gateway is, who the bot is, and the application's commands. */
function registerApplicationRoutes(app: FastifyInstance, deps: DiscordRestDeps): void {
  const { store } = deps;
  const global = () => 'global';

  app.get('/gateway', async (request) => ({ url: gatewayUrl(request) }));

  app.get('/gateway/bot', async (request, reply) => {
    if (await guardRoute(deps, request, reply, { auth: true, fault: 'gateway', bucket: 'gateway/bot', major: global })) return reply;
    return {
      url: gatewayUrl(request),
      shards: 1,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 },
    };
  });

  // '@me' and '@original' are route parameters: @discordjs/rest sends them percent-encoded (%40me).
  app.get<{ Params: { userId: string } }>('/users/:userId', async (request, reply) => {
    if (await guardRoute(deps, request, reply, { auth: true, fault: 'users', bucket: 'users', major: global })) return reply;
    if (request.params.userId !== '@me' && request.params.userId !== store.botUser.id) throw new DiscordApiError(404, 10013, 'Unknown User');
    return { ...store.botUser, verified: true, flags: 0, mfa_enabled: false };
  });

  app.get<{ Params: { applicationId: string } }>('/applications/:applicationId', async (request, reply) => {
    if (await guardRoute(deps, request, reply, { auth: true, fault: 'users', bucket: 'applications', major: global })) return reply;
    if (request.params.applicationId !== '@me') throw new DiscordApiError(404, 10002, 'Unknown Application');
    return { id: store.applicationId, name: 'Switchboard Sim', verify_key: store.publicKeyHex, bot: store.botUser, flags: 0 };
  });

  // Bulk overwrite of global commands: accepted and echoed with ids; the sim sends whatever command a test names.
  app.put<{ Params: { applicationId: string } }>('/applications/:applicationId/commands', async (request, reply) => {
    if (await guardRoute(deps, request, reply, { auth: true, fault: 'users', bucket: 'applications/commands', major: global })) return reply;
    if (request.params.applicationId !== store.applicationId) throw new DiscordApiError(403, 50001, 'Missing Access');
    if (!Array.isArray(request.body)) throw new DiscordApiError(400, 50035, 'Invalid Form Body');
    return (request.body as Record<string, unknown>[]).map((command) => ({ ...command, id: store.nextId(), application_id: store.applicationId, type: command.type ?? 1, version: store.nextId() }));
  });
}

/** Create Message, Edit Message and the typing indicator in a channel. */
function registerChannelMessageRoutes(app: FastifyInstance, deps: DiscordRestDeps): void {
  const { store } = deps;

  app.post<{ Params: { channelId: string } }>('/channels/:channelId/messages', async (request, reply) => {
    if (await guardRoute(deps, request, reply, { auth: true, fault: 'messages', bucket: 'channels/messages', major: channelMajor })) return reply;
    return createMessage(store, request.params.channelId, request.body);
  });

  // Edit Message: only the bot's own messages; `components` replaces the buttons (an empty list removes them).
  app.patch<{ Params: { channelId: string; messageId: string } }>('/channels/:channelId/messages/:messageId', async (request, reply) => {
    if (await guardRoute(deps, request, reply, { auth: true, fault: 'edits', bucket: 'channels/messages/edit', major: channelMajor })) return reply;
    const record = store.sentTo(request.params.channelId).find((r) => r.id === request.params.messageId);
    if (!record) throw new DiscordApiError(404, 10008, 'Unknown Message');
    const body = readMessageBody(request.body);
    if (body.components) record.components = body.components;
    store.recordEdit(record, body.content);
    return toMessage(store, record);
  });

  app.post<{ Params: { channelId: string } }>('/channels/:channelId/typing', async (request, reply) => {
    if (await guardRoute(deps, request, reply, { auth: true, fault: 'typing', bucket: 'channels/typing', major: channelMajor })) return reply;
    store.recordTyping(request.params.channelId);
    return reply.code(204).send();
  });
}

/** Create Message: a nonce with enforce_nonce answers the first message again; a reply must name a known message unless told otherwise. */
function createMessage(store: DiscordStore, channelId: string, raw: unknown): DiscordMessage {
  const body = readMessageBody(raw);
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
  return recordNewMessage(store, record);
}

// Create / Delete Own Reaction ('@me' may come percent-encoded; the emoji comes URL-encoded and is decoded by the router).
function registerReactionRoutes(app: FastifyInstance, deps: DiscordRestDeps): void {
  const { store } = deps;
  interface ReactionRoute {
    Params: { channelId: string; messageId: string; emoji: string; user: string };
  }
  const reactionUrl = '/channels/:channelId/messages/:messageId/reactions/:emoji/:user';
  const reactionGuard: RouteGuard = { auth: true, fault: 'reactions', bucket: 'channels/messages/reactions', major: channelMajor };

  app.put<ReactionRoute>(reactionUrl, async (request, reply) => {
    if (await guardRoute(deps, request, reply, reactionGuard)) return reply;
    const { channelId, messageId, emoji, user } = request.params;
    if (user !== '@me') throw new DiscordApiError(404, 0, '404: Not Found');
    if (emoji === '') throw new DiscordApiError(400, 10014, 'Unknown Emoji');
    store.reactions.add(`${channelId}:${messageId}`, emoji);
    return reply.code(204).send();
  });

  app.delete<ReactionRoute>(reactionUrl, async (request, reply) => {
    if (await guardRoute(deps, request, reply, reactionGuard)) return reply;
    const { channelId, messageId, emoji, user } = request.params;
    if (user !== '@me') throw new DiscordApiError(404, 0, '404: Not Found');
    store.reactions.remove(`${channelId}:${messageId}`, emoji);
    return reply.code(204).send();
  });
}

function gatewayUrl(request: FastifyRequest): string {
  return `ws://${request.headers.host ?? '127.0.0.1'}/discord-gateway`;
}
