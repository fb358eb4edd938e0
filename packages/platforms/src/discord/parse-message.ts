import { normaliseText, type InboundAttachment } from '@switchboard/core';
import { z } from 'zod';
import { PlatformError } from '../errors.ts';
import { normaliseInbound } from '../normalise-inbound.ts';
import type { ParseResult } from '../types.ts';

const snowflake = z.string().regex(/^\d{1,20}$/, 'must be a snowflake id');
const userSchema = z.object({ id: snowflake, username: z.string().optional(), bot: z.boolean().optional() }).passthrough();
const messageSchema = z
  .object({
    id: snowflake,
    channel_id: snowflake,
    guild_id: snowflake.optional(),
    author: userSchema,
    // Without the MESSAGE_CONTENT intent Discord sends '' for most guild messages.
    content: z.string().default(''),
    type: z.number().int().default(0),
    webhook_id: z.string().optional(),
    mentions: z.array(z.object({ id: snowflake }).passthrough()).default([]),
    channel_type: z.number().int().optional(),
    // Discord's attachment object; a voice message is one audio attachment with the IS_VOICE_MESSAGE flag on the message.
    attachments: z
      .array(z.object({ id: snowflake, filename: z.string(), content_type: z.string().optional(), size: z.number().int().nonnegative(), url: z.string().url() }).passthrough())
      .default([])
      // An unexpected attachment object drops the attachments, never the message.
      .catch([]),
    // Guild messages carry the author's member object; its roles feed role-based allowlists.
    member: z.object({ roles: z.array(snowflake).default([]) }).passthrough().optional(),
    referenced_message: z
      .object({ author: z.object({ id: snowflake }).passthrough().optional() })
      .passthrough()
      .nullable()
      .optional(),
  })
  .passthrough();

export type DiscordMessageCreate = z.infer<typeof messageSchema>;

export interface DiscordParseContext {
  /** The bot's user id, from READY; the bot's own messages are ignored by it. */
  botUserId: string;
  /** The application id; conversations are keyed by it (it falls back to the bot user id, which is the same for modern apps). */
  applicationId?: string;
  /** Thread channels the bot takes part in: in those it answers without being mentioned. */
  botThreadIds?: ReadonlySet<string> | ((channelId: string) => boolean);
}

/** Message types a person writes: DEFAULT and REPLY. Joins, pins, thread starters and the like are not input. */
const userMessageTypes = new Set([0, 19]);

/** Discord channel types of threads (announcement, public, private thread). */
export const discordThreadChannelTypes: ReadonlySet<number> = new Set([10, 11, 12]);

/**
 * MESSAGE_CREATE `d` → normalised inbound message, or the reason it is ignored
 * (Discord Gateway docs). DMs (no guild_id) are always answered; in guilds only
 * a mention of the bot, a reply to the bot, or a message in a thread the bot
 * takes part in. Conversation address:
 * - chatId is the channel id; a thread is its own channel on Discord, so a
 *   thread's messages carry the thread's channel id here and threadId stays ''
 *   (the thread already is the chat; nesting it under its parent would only
 *   add a second spelling of the same place);
 * - userScope is '' in DMs and the author's id in guild channels, which are
 *   scoped per user.
 * Throws PlatformError INVALID_PAYLOAD for something that is not a message.
 */
export function parseDiscordMessage(body: unknown, context: DiscordParseContext): ParseResult {
  const parsed = messageSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new PlatformError('INVALID_PAYLOAD', `not a Discord message: ${first?.path.join('.') || 'body'} ${first?.message ?? ''}`.trim());
  }
  const message = parsed.data;
  if (message.author.id === context.botUserId) return { kind: 'ignored', reason: 'own_message' };
  if (message.author.bot) return { kind: 'ignored', reason: 'bot_author' };
  if (message.webhook_id !== undefined) return { kind: 'ignored', reason: 'webhook_message' };
  if (!userMessageTypes.has(message.type)) return { kind: 'ignored', reason: 'unsupported_type' };
  const attachments = attachmentsOf(message.attachments);
  if (normaliseText(message.content).trim() === '' && attachments.length === 0) return { kind: 'ignored', reason: 'no_text' };

  const inGuild = message.guild_id !== undefined;
  if (inGuild && !isAddressedToBot(message, context)) return { kind: 'ignored', reason: 'not_addressed' };

  return {
    kind: 'message',
    message: normaliseInbound({
      platform: 'discord',
      eventId: message.id,
      userId: message.author.id,
      text: message.content,
      ...(attachments.length > 0 ? { attachments } : {}),
      ...(inGuild && message.member ? { roles: message.member.roles } : {}),
      address: {
        platform: 'discord',
        accountId: context.applicationId ?? context.botUserId,
        chatId: message.channel_id,
        threadId: '',
        userScope: inGuild ? message.author.id : '',
      },
      // In guilds the first part of the answer replies to the message it answers.
      // userMessageId (everywhere): the message the bot's status reaction goes on.
      replyTarget: inGuild ? { channelId: message.channel_id, messageId: message.id, userMessageId: message.id } : { channelId: message.channel_id, userMessageId: message.id },
    }),
  };
}

/** Attachments as references: the worker downloads each from its (signed) CDN URL (docs/media.md). */
function attachmentsOf(attachments: DiscordMessageCreate['attachments']): InboundAttachment[] {
  return attachments.map((a) => {
    const mime = a.content_type ?? null;
    const kind = mime?.startsWith('image/') ? 'image' : mime?.startsWith('audio/') ? 'audio' : 'document';
    return { kind, ref: a.url, mime, name: a.filename, size: a.size };
  });
}

function isAddressedToBot(message: DiscordMessageCreate, context: DiscordParseContext): boolean {
  if (message.mentions.some((user) => user.id === context.botUserId)) return true;
  if (message.referenced_message?.author?.id === context.botUserId) return true;
  const threads = context.botThreadIds;
  if (!threads) return false;
  return typeof threads === 'function' ? threads(message.channel_id) : threads.has(message.channel_id);
}
