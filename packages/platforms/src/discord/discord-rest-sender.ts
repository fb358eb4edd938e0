import { createHash } from 'node:crypto';
import { DiscordAPIError, HTTPError, RateLimitError, REST } from '@discordjs/rest';
import { ButtonStyle, ComponentType, Routes, type APIActionRowComponent, type APIButtonComponentWithCustomId } from 'discord-api-types/v10';
import { PlatformError } from '../errors.ts';
import type { FullSender, SenderShape } from '../load-on-first-use.ts';
import type { ChoiceButton, PlatformSender, SentMessage } from '../types.ts';
import type { DiscordSenderOptions } from './discord-sender-options.ts';
import { readDiscordReplyTarget, type DiscordReplyTarget } from './reply-target.ts';

// The only module besides the gateway connection's REST call that imports @discordjs/rest and
// discord-api-types' values; discord-sender.ts loads it on first use.

const nonceMaxLength = 25;

/**
 * Outbound Discord over @discordjs/rest. The worker's deliverer owns retries
 * and waiting (429: the platform's Retry-After; 5xx: backoff, then failed), so the client is built not to retry or sleep:
 * `retries: 0` (5xx and network errors surface at once) and
 * `rejectOnRateLimit` (a 429, or a bucket the client knows is empty, throws a
 * RateLimitError carrying the wait instead of sleeping inside the call).
 */
export function createDiscordRestSender(options: DiscordSenderOptions, shape: SenderShape): FullSender {
  const client = createRestClient(options);
  // Each method reads its target inside an async function: a malformed target rejects the call (REJECTED), it never throws.
  return {
    ...shape,
    sendText: async (rawTarget, text, sendOptions = {}) => sendText(client, readDiscordReplyTarget(rawTarget), text, sendOptions),
    editText: async (rawTarget, platformMessageId, text, editOptions = {}) =>
      editText(client, readDiscordReplyTarget(rawTarget), { platformMessageId, text, first: (editOptions.partIndex ?? 0) === 0 }),
    sendWithButtons: async (rawTarget, text, buttons, sendOptions) =>
      sendOptions ? sendText(client, readDiscordReplyTarget(rawTarget), text, { ...sendOptions, buttons }) : sendWithButtons(client, readDiscordReplyTarget(rawTarget), text, buttons),
    replaceText: async (rawTarget, platformMessageId, text) => replaceText(client, readDiscordReplyTarget(rawTarget), platformMessageId, text),
    setReaction: async (rawTarget, change) => setReaction(client, readDiscordReplyTarget(rawTarget), change),
    sendTyping: async (rawTarget) => sendTyping(client, readDiscordReplyTarget(rawTarget)),
  };
}

/** The REST client and how to give it the token again before a call that needs it. */
interface DiscordRestClient {
  rest: REST;
  authorise(): void;
}

type SendOptions = NonNullable<Parameters<PlatformSender['sendText']>[2]>;
type ReactionChange = Parameters<FullSender['setReaction']>[1];

function createRestClient(options: DiscordSenderOptions): DiscordRestClient {
  const rest = new REST({
    api: options.apiUrl.replace(/\/+$/, ''),
    version: '10',
    retries: 0,
    timeout: options.timeoutMs ?? 15_000,
    rejectOnRateLimit: () => true,
  });
  return {
    rest,
    authorise: () => {
      // @discordjs/rest forgets the token after any 401; set it again so one
      // rejected call does not turn every later call into a local error.
      rest.setToken(options.token);
    },
  };
}

// Part 0 of a reply answers the interaction or replies to the user's
// message; later parts are plain channel messages. Which part a message is
// comes from the outbox row (partIndex), never from this process's memory:
// a worker that restarts mid-reply must not take part 2 for the first
// and overwrite the interaction's answer with it.
async function sendText(client: DiscordRestClient, target: DiscordReplyTarget, text: string, sendOptions: SendOptions & { buttons?: readonly ChoiceButton[] }): Promise<SentMessage> {
  const first = (sendOptions.partIndex ?? 0) === 0;
  const nonce = sendOptions.idempotencyKey ? toNonce(sendOptions.idempotencyKey) : undefined;
  const interaction = first ? interactionOf(target) : undefined;
  const components = sendOptions.buttons && sendOptions.buttons.length > 0 ? toActionRows(sendOptions.buttons) : undefined;
  if (interaction) {
    try {
      // Editing the deferred "thinking…" response (what discord.js calls
      // editReply) rather than posting a follow-up: an edit sent twice after
      // an ambiguous failure is still one message, a follow-up is not.
      const message = await patchInteractionResponse(client, interaction, text, components);
      if (message !== 'expired') return { platformMessageId: String(message.id) };
    } catch (error) {
      throw toPlatformError(error, 'interaction response');
    }
  }
  try {
    return await postChannelMessage(client, target, { text, nonce, replyTo: first && !target.interactionToken ? target.messageId : undefined, components });
  } catch (error) {
    throw toPlatformError(error, 'create message');
  }
}

/** The slash command a target answers, when it names one. */
interface Interaction {
  applicationId: string;
  interactionToken: string;
}

function interactionOf(target: DiscordReplyTarget): Interaction | undefined {
  return target.interactionToken && target.applicationId ? { applicationId: target.applicationId, interactionToken: target.interactionToken } : undefined;
}

/**
 * Sets the text of the deferred interaction response (part 0 of a slash
 * command's reply): 'expired' once the interaction has expired (its token lives
 * 15 minutes; after that the answer goes to the channel instead).
 */
async function patchInteractionResponse(client: DiscordRestClient, interaction: Interaction, text: string, components?: ActionRows): Promise<{ id: string } | 'expired'> {
  try {
    return (await client.rest.patch(Routes.webhookMessage(interaction.applicationId, interaction.interactionToken, '@original'), {
      auth: false,
      body: { content: text, allowed_mentions: { parse: [] }, ...(components ? { components } : {}) },
    })) as { id: string };
  } catch (error) {
    if (!isExpiredInteraction(error)) throw error;
    return 'expired';
  }
}

async function postChannelMessage(
  client: DiscordRestClient,
  target: DiscordReplyTarget,
  message: { text: string; nonce: string | undefined; replyTo: string | undefined; components?: ActionRows | undefined },
): Promise<SentMessage> {
  const { text, nonce, replyTo, components } = message;
  client.authorise();
  const posted = (await client.rest.post(Routes.channelMessages(target.channelId), {
    body: {
      content: text,
      // The answer may quote what users wrote; it must never ping @everyone or roles on its own.
      allowed_mentions: { parse: [], replied_user: true },
      // A resend of the same outbox row returns the message Discord already made (Discord's enforce_nonce).
      ...(nonce ? { nonce, enforce_nonce: true } : {}),
      ...(replyTo ? { message_reference: { message_id: replyTo, fail_if_not_exists: false } } : {}),
      ...(components ? { components } : {}),
    },
  })) as { id: string };
  return { platformMessageId: String(posted.id) };
}

async function editText(client: DiscordRestClient, target: DiscordReplyTarget, edit: { platformMessageId: string; text: string; first: boolean }): Promise<void> {
  const { platformMessageId, text, first } = edit;
  try {
    // Part 0 of a slash command's reply is the interaction's response: edited through its webhook, as sendText made it.
    const interaction = first ? interactionOf(target) : undefined;
    if (interaction && (await patchInteractionResponse(client, interaction, text)) !== 'expired') return;
    client.authorise();
    await client.rest.patch(Routes.channelMessage(target.channelId, platformMessageId), { body: { content: text, allowed_mentions: { parse: [], replied_user: true } } });
  } catch (error) {
    throw toPlatformError(error, 'edit message');
  }
}

async function sendWithButtons(client: DiscordRestClient, target: DiscordReplyTarget, text: string, buttons: readonly ChoiceButton[]): Promise<SentMessage> {
  client.authorise();
  try {
    const message = (await client.rest.post(Routes.channelMessages(target.channelId), {
      body: { content: text, allowed_mentions: { parse: [] }, components: [toActionRow(buttons)] },
    })) as { id: string };
    return { platformMessageId: String(message.id) };
  } catch (error) {
    throw toPlatformError(error, 'create message');
  }
}

async function replaceText(client: DiscordRestClient, target: DiscordReplyTarget, platformMessageId: string, text: string): Promise<void> {
  client.authorise();
  try {
    await client.rest.patch(Routes.channelMessage(target.channelId, platformMessageId), { body: { content: text, components: [] } });
  } catch (error) {
    throw toPlatformError(error, 'edit message');
  }
}

async function setReaction(client: DiscordRestClient, target: DiscordReplyTarget, change: ReactionChange): Promise<void> {
  if (target.userMessageId === undefined) return;
  const { channelId, userMessageId } = target;
  client.authorise();
  // Routes.channelMessageOwnReaction takes the emoji URL-encoded (Discord's Create Reaction); a failed remove must not keep the next reaction away.
  const route = (emoji: string) => Routes.channelMessageOwnReaction(channelId, userMessageId, encodeURIComponent(emoji));
  const results = await Promise.allSettled([
    change.remove !== null ? client.rest.delete(route(change.remove)) : undefined,
    change.add !== null ? client.rest.put(route(change.add)) : undefined,
  ]);
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw toPlatformError(failed.reason, 'reaction');
}

async function sendTyping(client: DiscordRestClient, target: DiscordReplyTarget): Promise<void> {
  // A deferred interaction already shows "thinking…" until it is answered.
  if (target.interactionToken) return;
  client.authorise();
  try {
    await client.rest.post(Routes.channelTyping(target.channelId));
  } catch (error) {
    throw toPlatformError(error, 'typing');
  }
}

/** One action row of buttons; a press comes back as a MESSAGE_COMPONENT interaction carrying the custom_id (at most 100 characters). */
function toActionRow(buttons: readonly ChoiceButton[]): APIActionRowComponent<APIButtonComponentWithCustomId> {
  return {
    type: ComponentType.ActionRow,
    components: buttons.map((button) => ({
      type: ComponentType.Button,
      style: button.style === 'danger' ? ButtonStyle.Danger : button.style === 'primary' ? ButtonStyle.Primary : ButtonStyle.Secondary,
      label: button.label,
      custom_id: button.payload,
    })),
  };
}

type ActionRows = APIActionRowComponent<APIButtonComponentWithCustomId>[];

/** Discord takes at most 5 buttons a row and 5 rows a message. */
const buttonsPerRow = 5;
const rowsPerMessage = 5;

/** A reply part's buttons, five to a row; past 25 they are left off (the text still names every choice). */
function toActionRows(buttons: readonly ChoiceButton[]): ActionRows {
  const rows: ActionRows = [];
  for (let i = 0; i < Math.min(buttons.length, buttonsPerRow * rowsPerMessage); i += buttonsPerRow) rows.push(toActionRow(buttons.slice(i, i + buttonsPerRow)));
  return rows;
}

/** Discord nonces are at most 25 characters; longer keys are hashed down, keeping them stable. */
function toNonce(key: string): string {
  if (key.length <= nonceMaxLength) return key;
  return createHash('sha256').update(key).digest('base64url').slice(0, nonceMaxLength);
}

// 10015 Unknown Webhook, 50027 Invalid Webhook Token: the interaction expired.
function isExpiredInteraction(error: unknown): boolean {
  return error instanceof DiscordAPIError && (error.status === 401 || error.status === 404 || error.code === 10015 || error.code === 50027);
}

function toPlatformError(error: unknown, action: string): PlatformError {
  if (error instanceof PlatformError) return error;
  if (error instanceof RateLimitError) {
    const waitMs = Math.max(error.retryAfter, error.sublimitTimeout, 0) || error.timeToReset || 1000;
    return new PlatformError('RATE_LIMITED', `discord ${action}: rate limited (${error.scope})`, { retryAfterMs: Math.ceil(waitMs), cause: error });
  }
  if (error instanceof DiscordAPIError) {
    if (error.status === 429) return new PlatformError('RATE_LIMITED', `discord ${action}: rate limited`, { retryAfterMs: 1000, cause: error });
    if (error.status >= 500) return new PlatformError('UNAVAILABLE', `discord ${action}: ${error.status}`, { cause: error });
    return new PlatformError('REJECTED', `discord ${action}: ${error.status} ${error.code} ${error.message}`, { cause: error });
  }
  if (error instanceof HTTPError) {
    if (error.status >= 500) return new PlatformError('UNAVAILABLE', `discord ${action}: ${error.status}`, { cause: error });
    return new PlatformError('REJECTED', `discord ${action}: ${error.status}`, { cause: error });
  }
  return new PlatformError('UNAVAILABLE', `discord ${action}: network error`, { cause: error });
}
