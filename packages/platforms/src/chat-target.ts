import type { ConversationAddress } from '@switchboard/core';

/**
 * A reply target for a conversation's chat with no message of the user's to
 * answer (a triggered turn): the chat and its thread or topic, in the shape
 * each platform's parser stores (parse-update.ts, parse-event.ts,
 * parse-message.ts), without the ids that reply to or react on a message.
 */
export function chatReplyTarget(address: ConversationAddress): Record<string, unknown> {
  switch (address.platform) {
    case 'telegram': {
      // The simulator, like the Bot API, takes a string chat id only as @username: numeric ids go as numbers.
      const chatId = /^-?\d{1,16}$/.test(address.chatId) ? Number(address.chatId) : address.chatId;
      return { chatId, ...(/^\d{1,15}$/.test(address.threadId) ? { messageThreadId: Number(address.threadId) } : {}) };
    }
    case 'slack':
      return { channel: address.chatId, ...(address.threadId ? { threadTs: address.threadId } : {}) };
    case 'discord':
      // A Discord thread is a channel of its own (threadId stays ''): the chat id is where the message goes.
      return { channelId: address.chatId };
  }
}
