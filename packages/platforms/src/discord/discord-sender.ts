import { deferSender, loadOnFirstUse, type SenderShape } from '../load-on-first-use.ts';
import type { PlatformSender } from '../types.ts';
import type { DiscordSenderOptions } from './discord-sender-options.ts';

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
