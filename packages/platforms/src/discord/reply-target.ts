import { z } from 'zod';
import { PlatformError } from '../errors.ts';

/** Where a reply goes: what parseDiscordMessage / parseDiscordInteraction put in the reply target. */
export interface DiscordReplyTarget {
  channelId: string;
  /** The user's message; the first part of the answer replies to it (guilds only). */
  messageId?: string;
  /** The user's message in any channel (DMs too): where the bot's status reaction goes. */
  userMessageId?: string;
  /** Set for slash commands: the first part answers the deferred interaction response. */
  interactionToken?: string;
  applicationId?: string;
}

const optionalId = z.string().optional().catch(undefined);
// A malformed optional field is dropped rather than refused: the message still reaches the channel.
const discordReplyTargetSchema = z.object({
  channelId: z.string().min(1),
  messageId: optionalId,
  userMessageId: optionalId,
  interactionToken: optionalId,
  applicationId: optionalId,
});

/** The stored reply target read back (it is jsonb, so only its shape vouches for it); REJECTED without a channel. */
export function readDiscordReplyTarget(target: Record<string, unknown>): DiscordReplyTarget {
  const parsed = discordReplyTargetSchema.safeParse(target);
  if (!parsed.success) throw new PlatformError('REJECTED', 'discord: reply target has no channelId');
  const { channelId, messageId, userMessageId, interactionToken, applicationId } = parsed.data;
  return {
    channelId,
    ...(messageId !== undefined ? { messageId } : {}),
    ...(userMessageId !== undefined ? { userMessageId } : {}),
    ...(interactionToken !== undefined ? { interactionToken } : {}),
    ...(applicationId !== undefined ? { applicationId } : {}),
  };
}
