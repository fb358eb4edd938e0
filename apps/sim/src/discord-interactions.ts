import type { DiscordStore } from './discord-store.ts';
import type { DiscordSentRecord } from './discord-types.ts';
import type { EventHub } from './event-hub.ts';
import { elapsed, parseAnswer } from './outbound-answer.ts';
import { postToGateway, type GatewayPost } from './outbound-post.ts';
import { toMessage } from './discord-message-wire.ts';
import { SimError } from './errors.ts';

export interface InteractionInput {
  name?: string;
  options?: { name: string; value: string | number | boolean; type?: number }[];
  channel_id: string;
  guild_id?: string;
  /** A group DM: channel type 3 and interaction context 2 (PRIVATE_CHANNEL) instead of a DM with the bot. */
  group_dm?: boolean;
  user: { id: string; username: string };
  member_roles?: string[];
  /** 'valid' (default), 'bad' (a signature that does not verify) or 'none' (no signature headers). */
  signing?: 'valid' | 'bad' | 'none';
  ping?: boolean;
  id?: string;
  url?: string;
  /** A press of a button under the bot's message (type 3, MESSAGE_COMPONENT) instead of a slash command. */
  component?: { message_id: string; custom_id?: string; label?: string };
}

export interface InteractionResult {
  interaction: { id: string; token: string; type: number };
  /** 0 when no HTTP answer came (refused, reset, over Discord's 3 s). */
  status: number;
  body: unknown;
  ackMs: number;
  error?: string;
}

/** Discord gives an endpoint 3 s for its first answer (Discord interactions docs). */
const answerTimeoutMs = 3000;

/** The store the interaction is made from and recorded into, the stream it is announced on, and the shutdown that ends its POST. */
export interface InteractionDeps {
  store: DiscordStore;
  hub: EventHub;
  shutdown: AbortSignal;
}

/** What names one interaction: its snowflake, its webhook token and its type (1 PING, 2 APPLICATION_COMMAND, 3 MESSAGE_COMPONENT). */
interface InteractionIds {
  id: string;
  token: string;
  type: number;
}

/** The bot's message a user pressed a button under, and that button's custom_id. */
interface PressedButton {
  record: DiscordSentRecord;
  customId: string;
}

/**
 * POSTs one interaction to the app's Interactions Endpoint URL, signed as
 * Discord signs it (Ed25519 over timestamp + body), and reads the answer:
 * type 1 PONG, type 4 a message (recorded as the original response), type 5
 * deferred (the original response comes later through the webhook routes).
 */
export async function sendInteraction(deps: InteractionDeps, url: string, input: InteractionInput): Promise<InteractionResult> {
  const { store, hub } = deps;
  const id = input.id ?? store.nextId();
  const token = `sim-interaction-${id}-${Math.random().toString(36).slice(2, 10)}`;
  const ids: InteractionIds = { id, token, type: input.ping ? 1 : input.component ? 3 : 2 };
  const pressed = input.component ? findPressed(store, input.channel_id, input.component) : undefined;
  const payload = buildPayload(store, input, ids, pressed);
  // A button press may be answered "deferred" too (a Cancel button that runs a command): its webhook answers it later.
  if (ids.type === 2 || ids.type === 3) store.rememberInteraction({ id, applicationId: store.applicationId, token, channelId: input.channel_id, guildId: input.guild_id });

  const body = JSON.stringify(payload);
  const headers = signedHeaders(store, body, input.signing ?? 'valid');
  const result = await postInteraction(deps, { url, headers, body }, ids);
  if (ids.type === 2 && result.status === 200) noteAnswer(store, token, result.body);
  if (ids.type === 3 && result.status === 200 && (result.body as { type?: unknown } | null)?.type === 5) noteAnswer(store, token, result.body);
  if (pressed && result.status === 200) noteComponentAnswer(store, pressed.record, { channelId: input.channel_id, interactionId: id }, result.body);
  hub.publish('discord.interaction', result);
  return result;
}

/** The interaction object Discord POSTs: a button press carries the pressed message, a slash command its name and options. */
function buildPayload(store: DiscordStore, input: InteractionInput, ids: InteractionIds, pressed: PressedButton | undefined): Record<string, unknown> {
  const { id, token, type } = ids;
  return {
    id,
    application_id: store.applicationId,
    type,
    token,
    version: 1,
    ...(pressed
      ? {
          data: { custom_id: pressed.customId, component_type: 2 },
          message: toMessage(store, pressed.record),
          ...placeFields(input),
        }
      : {}),
    ...(type === 2
      ? {
          data: {
            id: store.nextId(),
            name: input.name ?? 'help',
            type: 1,
            ...(input.options && input.options.length > 0 ? { options: input.options.map((option) => ({ type: option.type ?? 3, ...option })) } : {}),
          },
          ...placeFields(input),
          ...(input.guild_id !== undefined ? { guild_locale: 'en-US' } : {}),
        }
      : {}),
  };
}

/** Where the interaction happened and who made it: the channel, the context, the guild member or the DM user. */
function placeFields(input: InteractionInput): Record<string, unknown> {
  const inGuild = input.guild_id !== undefined;
  const user = { id: input.user.id, username: input.user.username, discriminator: '0', global_name: input.user.username, avatar: null };
  // Discord's interaction `context`: 0 GUILD, 1 BOT_DM, 2 PRIVATE_CHANNEL (group DMs and DMs between users, for user-installed apps).
  const place = inGuild ? { context: 0, channel: { id: input.channel_id, type: 0 } } : input.group_dm ? { context: 2, channel: { id: input.channel_id, type: 3 } } : { context: 1, channel: { id: input.channel_id, type: 1 } };
  return {
    channel_id: input.channel_id,
    ...place,
    ...(inGuild ? { guild_id: input.guild_id, member: { user, roles: input.member_roles ?? [], permissions: '0' } } : { user }),
    app_permissions: '0',
    locale: 'en-US',
  };
}

function signedHeaders(store: DiscordStore, body: string, signing: NonNullable<InteractionInput['signing']>): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Discord-Interactions/1.0 (+https://discord.com)' };
  if (signing !== 'none') {
    // A bad signature is a real signature over other bytes, as Discord's own endpoint checks send.
    headers['x-signature-ed25519'] = store.signInteraction(timestamp, signing === 'bad' ? `${body} ` : body);
    headers['x-signature-timestamp'] = timestamp;
  }
  return headers;
}

async function postInteraction(deps: InteractionDeps, post: GatewayPost, ids: InteractionIds): Promise<InteractionResult> {
  const interaction = { id: ids.id, token: ids.token, type: ids.type };
  const startedAt = performance.now();
  try {
    const answer = await postToGateway(post, answerTimeoutMs, deps.shutdown);
    return { interaction, status: answer.status, body: parseAnswer(answer.text), ackMs: elapsed(startedAt) };
  } catch (error) {
    return { interaction, status: 0, body: null, ackMs: elapsed(startedAt), error: error instanceof Error ? error.message : String(error) };
  }
}

/** The bot's message and the pressed button's custom_id, by custom_id or label. */
function findPressed(store: DiscordStore, channelId: string, component: NonNullable<InteractionInput['component']>): PressedButton {
  const record = store.sentTo(channelId).find((r) => r.id === component.message_id);
  const buttons = (record?.components ?? []).flatMap((row) => ((row as { components?: unknown[] }).components ?? []) as { custom_id?: string; label?: string }[]);
  const button = buttons.find((b) => (component.custom_id !== undefined ? b.custom_id === component.custom_id : b.label === component.label));
  if (!record || !button?.custom_id) throw new SimError('SIM_NO_SUCH_BUTTON', `no such button on message ${component.message_id}`, 404);
  return { record, customId: button.custom_id };
}

/** Type 7 rewrites the pressed message (its components too); type 4 with flag 64 is a line only the presser sees. */
function noteComponentAnswer(store: DiscordStore, record: DiscordSentRecord, where: { channelId: string; interactionId: string }, answer: unknown): void {
  const { channelId, interactionId } = where;
  const response = answer as { type?: unknown; data?: { content?: unknown; components?: unknown; flags?: unknown } } | null;
  if (response?.type === 7) {
    if (Array.isArray(response.data?.components)) record.components = response.data.components;
    if (typeof response.data?.content === 'string') store.recordEdit(record, response.data.content);
  }
  if (response?.type === 4 && typeof response.data?.content === 'string') {
    const ephemeral = typeof response.data.flags === 'number' && (response.data.flags & 64) !== 0;
    store.recordSent({ id: store.nextId(), channel_id: channelId, content: response.data.content, interaction_id: interactionId, ...(ephemeral ? { ephemeral: true as const } : {}), sentAt: Date.now() });
  }
}

function noteAnswer(store: DiscordStore, token: string, answer: unknown): void {
  const interaction = store.findInteraction(store.applicationId, token);
  const response = answer as { type?: unknown; data?: { content?: unknown } } | null;
  if (!interaction || typeof response?.type !== 'number') return;
  interaction.responseType = response.type;
  if (response.type === 4 && typeof response.data?.content === 'string') {
    const record: DiscordSentRecord = {
      id: store.nextId(),
      channel_id: interaction.channelId,
      content: response.data.content,
      original: true,
      interaction_id: interaction.id,
      sentAt: Date.now(),
    };
    interaction.original = record;
    store.recordSent(record);
  }
}
