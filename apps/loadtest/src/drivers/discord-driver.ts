import { randomInt } from 'node:crypto';
import { readJson } from '../http-json.ts';
import { listChannelReplies, waitForChannelReplies } from './channel-list.ts';
import type { BotReply, PlatformDriver, SendOutcome } from './platform-driver.ts';

export interface DiscordDriverOptions {
  /**
   * The simulator whose Gateway the gateway processes connect to: Discord
   * pushes messages over that one WebSocket (one connection per bot token
   * across all gateways), so every chat goes through it and `route` is unused.
   */
  simUrl: string;
}

interface DiscordSent {
  content: string;
  sentAt: number;
}

interface DispatchAnswer {
  delivered: boolean;
  queued?: boolean;
}

const toReply = (record: DiscordSent, order: number): BotReply => ({ order, text: record.content, at: record.sentAt });

// DMs only: in guild channels the bot answers only when mentioned.
export function createDiscordDriver(options: DiscordDriverOptions): PlatformDriver {
  const runBase = randomInt(1, 90_000) * 1_000_000;
  return {
    platform: 'discord',
    openChat(instance) {
      return { platform: 'discord', chatId: String(runBase + instance), route: 0 };
    },
    async sendHuman(chat, text): Promise<SendOutcome> {
      try {
        // No HTTP ack exists here (a Gateway dispatch is fire and forget), so there is no ack latency to report.
        const answer = await readJson<DispatchAnswer>(`${options.simUrl}/control/discord/messages`, {
          method: 'POST',
          body: { channel_id: chat.chatId, author: { id: `${chat.chatId}7`, username: 'loadtest' }, content: text },
        });
        // Queued = no session right now; the simulator sends it right after the next READY, as Discord would resume.
        const delivered = answer.delivered || answer.queued === true;
        return { delivered, status: delivered ? 200 : 0, ...(delivered ? {} : { error: 'no Gateway session took the message' }) };
      } catch (error) {
        return { delivered: false, status: 0, error: `simulator: ${error instanceof Error ? error.message : String(error)}` };
      }
    },
    waitForReplies(chat, afterOrder, timeoutMs, signal) {
      return waitForChannelReplies<DiscordSent>(
        (count) => `${options.simUrl}/control/discord/wait?channel_id=${chat.chatId}&count=${count}&timeout_ms=${Math.round(timeoutMs)}`,
        afterOrder,
        toReply,
        signal,
      );
    },
    listReplies(chats) {
      return listChannelReplies<DiscordSent>(chats.map((c) => c.chatId), (chatId) => `${options.simUrl}/control/discord/sent?channel_id=${chatId}`, toReply);
    },
  };
}
