import { resolveConversationKey, storedCommandOf, type ChatCommand } from '@switchboard/core';
import type { InboundToStore } from '@switchboard/db';
import type { InboundMessage } from '@switchboard/platforms';

/**
 * The row an inbound message is stored as, with its command parsed once (the
 * caller's parse): shared by ordinary input and typed approval answers, so the
 * two doors can never store one message differently.
 */
export function inboundToStore(message: InboundMessage, command: ChatCommand | null, admission: Pick<InboundToStore, 'refuseAtPending' | 'storeAs'>): InboundToStore {
  return {
    platform: message.platform,
    accountId: message.address.accountId,
    eventId: message.eventId,
    conversationKey: resolveConversationKey(message.address),
    chatId: message.address.chatId,
    threadId: message.address.threadId,
    userScope: message.address.userScope,
    userId: message.userId,
    text: message.text,
    command: storedCommandOf(command),
    replyTarget: message.replyTarget,
    ...(message.attachments && message.attachments.length > 0 ? { attachments: message.attachments } : {}),
    ...admission,
  };
}
