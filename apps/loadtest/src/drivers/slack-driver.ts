import { randomInt } from 'node:crypto';
import { readJson } from '../http-json.ts';
import { listChannelReplies, waitForChannelReplies } from './channel-list.ts';
import type { BotReply, PlatformDriver, SendOutcome } from './platform-driver.ts';

export interface SlackDriverOptions {
  /** Where the bot's posts are recorded (the simulator the workers' SLACK_API_URL points at). */
  replySimUrl: string;
  /** One simulator per gateway, each with its Request URL set to that gateway. */
  inboundSimUrls: string[];
  /** Give event ids here: several simulators would each count from the same start (see the Telegram driver). */
  explicitEventIds: boolean;
}

interface SlackSent {
  text: string;
  sentAt: number;
}

interface EventAnswer {
  delivered: boolean;
  attempts?: { status: number; ackMs?: number; error?: string }[];
}

// As posted: mrkdwn, with &, < and > escaped (the checker formats the recorded text the same way, posted-reply.ts).
const toReply = (record: SlackSent, order: number): BotReply => ({ order, text: record.text, at: record.sentAt });

// DMs only (channel ids starting with D): in channels the bot answers only when mentioned, in a thread.
export function createSlackDriver(options: SlackDriverOptions): PlatformDriver {
  const runBase = randomInt(1, 90_000) * 1_000_000;
  let nextEventId = Date.now() * 1000;
  return {
    platform: 'slack',
    openChat(instance, route) {
      return { platform: 'slack', chatId: `D${runBase + instance}`, route: route % options.inboundSimUrls.length };
    },
    async sendHuman(chat, text): Promise<SendOutcome> {
      const simUrl = options.inboundSimUrls[chat.route] as string;
      try {
        const answer = await readJson<EventAnswer>(`${simUrl}/control/slack/events`, {
          method: 'POST',
          body: { channel: chat.chatId, user: `U${chat.chatId.slice(1)}`, text, ...(options.explicitEventIds ? { event_id: `Ev${nextEventId++}` } : {}) },
        });
        const first = answer.attempts?.[0];
        const last = answer.attempts?.at(-1);
        return {
          delivered: answer.delivered,
          status: last?.status ?? 0,
          // The first attempt's answer time: a retry's would hide a slow first answer.
          ...(first?.ackMs !== undefined ? { ackMs: first.ackMs } : {}),
          ...(answer.delivered ? {} : { error: last?.error ?? `gateway answered ${last?.status ?? 0}` }),
        };
      } catch (error) {
        return { delivered: false, status: 0, error: `simulator: ${error instanceof Error ? error.message : String(error)}` };
      }
    },
    waitForReplies(chat, afterOrder, timeoutMs, signal) {
      return waitForChannelReplies<SlackSent>(
        (count) => `${options.replySimUrl}/control/slack/wait?channel=${chat.chatId}&count=${count}&timeout_ms=${Math.round(timeoutMs)}`,
        afterOrder,
        toReply,
        signal,
      );
    },
    listReplies(chats) {
      return listChannelReplies<SlackSent>(chats.map((c) => c.chatId), (chatId) => `${options.replySimUrl}/control/slack/sent?channel=${chatId}`, toReply);
    },
  };
}
