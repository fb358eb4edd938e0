import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readMessageBody, recordNewMessage, toMessage } from './discord-message-wire.ts';
import { guardRoute, type DiscordRestDeps, type RouteGuard } from './discord-rest-guard.ts';
import type { DiscordStore, InteractionState } from './discord-store.ts';
import { DiscordApiError, type DiscordMessage, type DiscordSentRecord } from './discord-types.ts';

interface WebhookRoute {
  Params: { appId: string; token: string };
}
interface WebhookMessageRoute {
  Params: { appId: string; token: string; messageId: string };
}

const webhookGuard: RouteGuard = { auth: false, fault: 'followup', bucket: 'webhooks', major: (r: FastifyRequest) => (r.params as { token: string }).token };

/** An interaction's webhook (`/webhooks/:appId/:token`): follow-ups and the original response, authenticated by the token. */
export function registerInteractionWebhookRoutes(app: FastifyInstance, deps: DiscordRestDeps): void {
  const { store } = deps;

  // Interaction follow-up: a new message through the interaction's webhook.
  app.post<WebhookRoute>('/webhooks/:appId/:token', async (request, reply) => {
    if (await guardRoute(deps, request, reply, webhookGuard)) return reply;
    const interaction = findInteraction(store, request.params);
    const body = readMessageBody(request.body);
    return recordNewMessage(store, { id: store.nextId(), channel_id: interaction.channelId, content: body.content, followup: true, interaction_id: interaction.id, sentAt: Date.now() });
  });

  // Editing the original response: after a deferred answer (type 5) this is what replaces "thinking…".
  app.patch<WebhookMessageRoute>('/webhooks/:appId/:token/messages/:messageId', async (request, reply) => {
    if (await guardRoute(deps, request, reply, webhookGuard)) return reply;
    const interaction = findInteraction(store, request.params);
    if (request.params.messageId !== '@original') return editFollowup(store, interaction, request.params.messageId, readMessageBody(request.body).content);
    if (interaction.responseType === undefined) throw new DiscordApiError(404, 10008, 'Unknown Message');
    return editOriginal(store, interaction, readMessageBody(request.body));
  });

  app.get<WebhookMessageRoute>('/webhooks/:appId/:token/messages/:messageId', async (request) => {
    const interaction = findInteraction(store, request.params);
    const record = request.params.messageId === '@original' ? interaction.original : store.sentTo(interaction.channelId).find((r) => r.id === request.params.messageId);
    if (!record || record.interaction_id !== interaction.id) throw new DiscordApiError(404, 10008, 'Unknown Message');
    return toMessage(store, record);
  });
}

/** The original response is edited when it exists, else made now (the first edit after a deferred answer); `components` set its buttons. */
function editOriginal(store: DiscordStore, interaction: InteractionState, body: { content: string; components?: unknown[] }): DiscordMessage {
  const { content, components } = body;
  if (interaction.original) {
    if (components) interaction.original.components = components;
    store.recordEdit(interaction.original, content);
    return toMessage(store, interaction.original);
  }
  const record: DiscordSentRecord = {
    id: store.nextId(),
    channel_id: interaction.channelId,
    content,
    followup: true,
    original: true,
    interaction_id: interaction.id,
    ...(components ? { components } : {}),
    sentAt: Date.now(),
  };
  interaction.original = record;
  return recordNewMessage(store, record);
}

function editFollowup(store: DiscordStore, interaction: InteractionState, messageId: string, content: string): DiscordMessage {
  const record = store.sentTo(interaction.channelId).find((r) => r.id === messageId && r.interaction_id === interaction.id);
  if (!record) throw new DiscordApiError(404, 10008, 'Unknown Message');
  store.recordEdit(record, content);
  return toMessage(store, record);
}

function findInteraction(store: DiscordStore, params: { appId: string; token: string }): InteractionState {
  const interaction = store.findInteraction(params.appId, params.token);
  if (!interaction) throw new DiscordApiError(404, 10015, 'Unknown Webhook');
  return interaction;
}
