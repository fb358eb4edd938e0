import { createHash } from 'node:crypto';
import { DiscordAPIError, HTTPError, RateLimitError, REST } from '@discordjs/rest';
import { ButtonStyle, ComponentType, Routes, type APIActionRowComponent, type APIButtonComponentWithCustomId } from 'discord-api-types/v10';
import { PlatformError } from '../errors.ts';
import type { FullSender, SenderShape } from '../load-on-first-use.ts';
import type { ChoiceButton, SentMessage } from '../types.ts';
import type { DiscordReplyTarget, DiscordSenderOptions } from './discord-sender.ts';
import { readDiscordReplyTarget } from './reply-target.ts';

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
  const rest = new REST({
    api: options.apiUrl.replace(/\/+$/, ''),
    version: '10',
    retries: 0,
    timeout: options.timeoutMs ?? 15_000,
    rejectOnRateLimit: () => true,
  });
  // Part 0 of a reply answers the interaction or replies to the user's
  // message; later parts are plain channel messages. Which part a message is
  // comes from the outbox row (partIndex), never from this process's memory:
  // a worker that restarts mid-reply must not take part 2 for the first
  // and overwrite the interaction's answer with it.
  const authorise = () => {
    // @discordjs/rest forgets the token after any 401; set it again so one
    // rejected call does not turn every later call into a local error.
    rest.setToken(options.token);
  };

  async function postChannelMessage(target: DiscordReplyTarget, text: string, nonce: string | undefined, replyTo: string | undefined): Promise<SentMessage> {
    authorise();
    const message = (await rest.post(Routes.channelMessages(target.channelId), {
      body: {
        content: text,
        // The answer may quote what users wrote; it must never ping @everyone or roles on its own.
        allowed_mentions: { parse: [], replied_user: true },
        // A resend of the same outbox row returns the message Discord already made (Discord's enforce_nonce).
        ...(nonce ? { nonce, enforce_nonce: true } : {}),
        ...(replyTo ? { message_reference: { message_id: replyTo, fail_if_not_exists: false } } : {}),
      },
    })) as { id: string };
    return { platformMessageId: String(message.id) };
  }

  return {
    ...shape,
    async sendText(rawTarget, text, sendOptions = {}): Promise<SentMessage> {
      const target = readDiscordReplyTarget(rawTarget);
      const first = (sendOptions.partIndex ?? 0) === 0;
      const nonce = sendOptions.idempotencyKey ? toNonce(sendOptions.idempotencyKey) : undefined;
      if (first && target.interactionToken && target.applicationId) {
        try {
          // Editing the deferred "thinking…" response (what discord.js calls
          // editReply) rather than posting a follow-up: an edit sent twice after
          // an ambiguous failure is still one message, a follow-up is not.
          const message = (await rest.patch(Routes.webhookMessage(target.applicationId, target.interactionToken, '@original'), {
            auth: false,
            body: { content: text, allowed_mentions: { parse: [] } },
          })) as { id: string };
          return { platformMessageId: String(message.id) };
        } catch (error) {
          // The interaction token lives 15 minutes; after that the answer goes to the channel instead.
          if (!isExpiredInteraction(error)) throw toPlatformError(error, 'interaction response');
        }
      }
      try {
        return await postChannelMessage(target, text, nonce, first && !target.interactionToken ? target.messageId : undefined);
      } catch (error) {
        throw toPlatformError(error, 'create message');
      }
    },
    async editText(rawTarget, platformMessageId, text, editOptions = {}): Promise<void> {
      const target = readDiscordReplyTarget(rawTarget);
      const first = (editOptions.partIndex ?? 0) === 0;
      try {
        if (first && target.interactionToken && target.applicationId) {
          // Part 0 of a slash command's reply is the interaction's response: edited through its webhook, as sendText made it.
          try {
            await rest.patch(Routes.webhookMessage(target.applicationId, target.interactionToken, '@original'), { auth: false, body: { content: text, allowed_mentions: { parse: [] } } });
            return;
          } catch (error) {
            if (!isExpiredInteraction(error)) throw error;
          }
        }
        authorise();
        await rest.patch(Routes.channelMessage(target.channelId, platformMessageId), { body: { content: text, allowed_mentions: { parse: [], replied_user: true } } });
      } catch (error) {
        throw toPlatformError(error, 'edit message');
      }
    },
    async sendWithButtons(rawTarget, text, buttons): Promise<SentMessage> {
      const target = readDiscordReplyTarget(rawTarget);
      authorise();
      try {
        const message = (await rest.post(Routes.channelMessages(target.channelId), {
          body: { content: text, allowed_mentions: { parse: [] }, components: [toActionRow(buttons)] },
        })) as { id: string };
        return { platformMessageId: String(message.id) };
      } catch (error) {
        throw toPlatformError(error, 'create message');
      }
    },
    async replaceText(rawTarget, platformMessageId, text): Promise<void> {
      const target = readDiscordReplyTarget(rawTarget);
      authorise();
      try {
        await rest.patch(Routes.channelMessage(target.channelId, platformMessageId), { body: { content: text, components: [] } });
      } catch (error) {
        throw toPlatformError(error, 'edit message');
      }
    },
    async setReaction(rawTarget, change): Promise<void> {
      const target = readDiscordReplyTarget(rawTarget);
      if (target.userMessageId === undefined) return;
      const { channelId, userMessageId } = target;
      authorise();
      // Routes.channelMessageOwnReaction takes the emoji URL-encoded (Discord's Create Reaction); a failed remove must not keep the next reaction away.
      const route = (emoji: string) => Routes.channelMessageOwnReaction(channelId, userMessageId, encodeURIComponent(emoji));
      const results = await Promise.allSettled([
        change.remove !== null ? rest.delete(route(change.remove)) : undefined,
        change.add !== null ? rest.put(route(change.add)) : undefined,
      ]);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw toPlatformError(failed.reason, 'reaction');
    },
    async sendTyping(rawTarget): Promise<void> {
      const target = readDiscordReplyTarget(rawTarget);
      // A deferred interaction already shows "thinking…" until it is answered.
      if (target.interactionToken) return;
      authorise();
      try {
        await rest.post(Routes.channelTyping(target.channelId));
      } catch (error) {
        throw toPlatformError(error, 'typing');
      }
    },
  };
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
