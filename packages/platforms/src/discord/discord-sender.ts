import { deferSender, loadOnFirstUse, type SenderShape } from '../load-on-first-use.ts';
import type { PlatformSender } from '../types.ts';

export interface DiscordSenderOptions {
  token: string;
  /** REST base without the version, e.g. https://discord.com/api (the simulator's `<url>/api` in tests). */
  apiUrl: string;
  /** Characters per message; Discord's hard limit is 2000. */
  messageLimit?: number;
  /** One request's timeout. */
  timeoutMs?: number;
}

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

const discordMessageLimit = 2000;

/** @discordjs/rest and discord-api-types, loaded only where Discord is used (load-on-first-use.ts says why). */
const loadDiscordRestSender = loadOnFirstUse(() => import('./discord-rest-sender.ts'));

/** Outbound Discord over @discordjs/rest (discord-rest-sender.ts), which loads on the first call. */
export function createDiscordSender(options: DiscordSenderOptions): PlatformSender {
  const shape: SenderShape = {
    platform: 'discord',
    messageLimit: Math.min(options.messageLimit ?? discordMessageLimit, discordMessageLimit),
    // Discord's typing indicator lasts 10 s; refresh a little before it fades.
    typingIntervalMs: 8000,
  };
  return deferSender(shape, async () => (await loadDiscordRestSender()).createDiscordRestSender(options, shape));
}
