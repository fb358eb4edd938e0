/**
 * How the load test acts as a platform's user and reads what the bot said
 * there. One driver per platform; each speaks only the simulator's control
 * API for that platform (apps/sim/README.md), which sends real, signed
 * deliveries to the gateway.
 */
export type PlatformName = 'telegram' | 'slack' | 'discord';

/** Platforms this load tester can drive today. */
export const supportedPlatforms: readonly PlatformName[] = ['telegram', 'slack', 'discord'];

const knownPlatforms: readonly string[] = ['telegram', 'slack', 'discord'];

/** Why a platform name cannot be used, or undefined when it can. */
export function unsupportedPlatformReason(name: string): string | undefined {
  if (!knownPlatforms.includes(name)) return `unknown platform "${name}" (known: ${knownPlatforms.join(', ')})`;
  if (!supportedPlatforms.includes(name as PlatformName)) {
    return `${name} is not supported yet: apps/sim/README.md does not document its control API, so there is no driver for it (supported: ${supportedPlatforms.join(', ')})`;
  }
  return undefined;
}

/** One replayed conversation's place on its platform. */
export interface ChatHandle {
  platform: PlatformName;
  /** The platform's chat or channel id, as the replies are filed under it. */
  chatId: string;
  /** Which gateway (and inbound simulator) this chat's deliveries go to. */
  route: number;
}

export interface SendOutcome {
  /** The gateway answered 2xx. */
  delivered: boolean;
  /** 0 = no HTTP answer. */
  status: number;
  /** The gateway's answer time as the simulator measured it; absent where the platform has no ack (Discord's Gateway). */
  ackMs?: number;
  error?: string;
}

/** A message the bot posted, in the platform's order. */
export interface BotReply {
  /** Increasing per chat in posting order (Telegram message_id). */
  order: number;
  /** As the bot posted it, its markup included (Telegram HTML, Slack mrkdwn, Discord Markdown). */
  text: string;
  /** When the platform recorded it, epoch ms. */
  at: number;
}

export interface PlatformDriver {
  readonly platform: PlatformName;
  openChat(instance: number, route: number): ChatHandle;
  /** Sends one human line as the platform would deliver it. */
  sendHuman(chat: ChatHandle, text: string): Promise<SendOutcome>;
  /** Waits until the bot has posted after `afterOrder`; [] on timeout. */
  waitForReplies(chat: ChatHandle, afterOrder: number, timeoutMs: number, signal?: AbortSignal): Promise<BotReply[]>;
  /** Everything the bot posted in these chats, for the final check. */
  listReplies(chats: ChatHandle[]): Promise<Map<string, BotReply[]>>;
}
