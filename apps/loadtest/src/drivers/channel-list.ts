import { readJson } from '../http-json.ts';
import type { BotReply } from './platform-driver.ts';

/**
 * Slack and Discord record the bot's messages per channel, in posting order,
 * and their waits count from the channel's first message: a reply's order is
 * its position in that list (1-based), and "after n" means "wait for n + 1".
 */
export async function waitForChannelReplies<T>(url: (count: number) => string, afterOrder: number, toReply: (record: T, order: number) => BotReply, signal?: AbortSignal): Promise<BotReply[]> {
  const sent = await readJson<T[] | { sent: T[] }>(url(afterOrder + 1), { acceptStatus: [408], signal });
  if (!Array.isArray(sent)) return [];
  return sent.map((record, i) => toReply(record, i + 1)).slice(afterOrder);
}

/** Reads each chat's full list, a few chats at a time (the simulators answer one channel per call). */
export async function listChannelReplies<T>(chatIds: string[], url: (chatId: string) => string, toReply: (record: T, order: number) => BotReply): Promise<Map<string, BotReply[]>> {
  const byChat = new Map<string, BotReply[]>();
  const queue = [...chatIds];
  const lane = async () => {
    for (let chatId = queue.shift(); chatId !== undefined; chatId = queue.shift()) {
      const sent = await readJson<T[]>(url(chatId));
      byChat.set(chatId, sent.map((record, i) => toReply(record, i + 1)));
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return byChat;
}
