import { randomInt } from 'node:crypto';
import { readJson } from '../http-json.ts';
import type { BotReply, ChatHandle, PlatformDriver, SendOutcome } from './platform-driver.ts';

export interface TelegramDriverOptions {
  /** Where the bot's messages are recorded (the simulator the workers send to). */
  replySimUrl: string;
  /** One simulator per gateway; route i delivers through inboundSimUrls[i]. */
  inboundSimUrls: string[];
  /**
   * Number the updates here instead of in each simulator. Needed when several
   * simulators feed one database: their own counters could hand out the same
   * update_id, which the gateway would rightly drop as a re-delivery.
   */
  explicitUpdateIds: boolean;
}

interface SentRecord {
  message_id: number;
  chat_id: number | string;
  /** What the chat shows, the markup parsed away. */
  text: string;
  /** The text as the bot sent it, when it used a parse_mode. */
  rawText?: string;
  sentAt: number;
}

interface UpdateAnswer {
  delivered: boolean;
  status?: number;
  ackMs?: number;
  error?: string;
}

// Private chats only: in groups the bot answers only when addressed (mentioned, in its thread, or in a DM), which is not what is measured here.
export function createTelegramDriver(options: TelegramDriverOptions): PlatformDriver {
  // Fresh chat ids per run, so a long-lived simulator's records of an earlier run never mix in.
  const runBase = randomInt(1, 90_000) * 1_000_000;
  // Microseconds since the epoch: a later run on the same database always numbers above an earlier one.
  let nextUpdateId = Date.now() * 1000;
  return {
    platform: 'telegram',
    openChat(instance, route) {
      return { platform: 'telegram', chatId: String(runBase + instance), route: route % options.inboundSimUrls.length };
    },
    async sendHuman(chat, text): Promise<SendOutcome> {
      const simUrl = options.inboundSimUrls[chat.route] as string;
      const id = Number(chat.chatId);
      try {
        const answer = await readJson<UpdateAnswer>(`${simUrl}/control/telegram/updates`, {
          method: 'POST',
          body: {
            chat: { id, type: 'private' },
            from: { id, first_name: 'Loadtest' },
            text,
            ...(options.explicitUpdateIds ? { update_id: nextUpdateId++ } : {}),
          },
        });
        return {
          delivered: answer.delivered,
          status: answer.status ?? 0,
          ...(answer.ackMs !== undefined ? { ackMs: answer.ackMs } : {}),
          ...(answer.error ? { error: answer.error } : !answer.delivered ? { error: `gateway answered ${answer.status ?? 0}` } : {}),
        };
      } catch (error) {
        return { delivered: false, status: 0, error: `simulator: ${error instanceof Error ? error.message : String(error)}` };
      }
    },
    async waitForReplies(chat, afterOrder, timeoutMs, signal): Promise<BotReply[]> {
      const url = `${options.replySimUrl}/control/telegram/wait?chat_id=${chat.chatId}&count=1&after_message_id=${afterOrder}&timeout_ms=${Math.round(timeoutMs)}`;
      const sent = await readJson<SentRecord[]>(url, { acceptStatus: [408], signal });
      return Array.isArray(sent) ? sent.map(toReply) : [];
    },
    async listReplies(chats: ChatHandle[]): Promise<Map<string, BotReply[]>> {
      const wanted = new Set(chats.map((chat) => chat.chatId));
      const byChat = new Map<string, BotReply[]>([...wanted].map((id) => [id, []]));
      for (const record of await readJson<SentRecord[]>(`${options.replySimUrl}/control/telegram/sent`)) {
        byChat.get(String(record.chat_id))?.push(toReply(record));
      }
      for (const replies of byChat.values()) replies.sort((a, b) => a.order - b.order);
      return byChat;
    },
  };
}

function toReply(record: SentRecord): BotReply {
  // As posted, HTML included: the checker compares formatting as well as words (reply-checker.ts).
  return { order: record.message_id, text: record.rawText ?? record.text, at: record.sentAt };
}
