import { normaliseText, normaliseStringValues } from '@switchboard/core';
import type { InboundMessage } from './types.ts';

/**
 * Every string of a parsed message that reaches Postgres or the conversation
 * key, normalised (NUL removed, lone surrogates replaced): a hostile payload
 * then stores like any other instead of failing the store forever.
 */
export function normaliseInbound(message: InboundMessage): InboundMessage {
  const { address } = message;
  return {
    ...message,
    eventId: normaliseText(message.eventId),
    userId: normaliseText(message.userId),
    text: normaliseText(message.text),
    ...(message.roles ? { roles: message.roles.map(normaliseText) } : {}),
    ...(message.attachments && message.attachments.length > 0
      ? { attachments: message.attachments.map((a) => ({ ...a, ref: normaliseText(a.ref), mime: a.mime && normaliseText(a.mime), name: a.name && normaliseText(a.name) })) }
      : {}),
    address: {
      platform: address.platform,
      accountId: normaliseText(address.accountId),
      chatId: normaliseText(address.chatId),
      threadId: normaliseText(address.threadId),
      userScope: normaliseText(address.userScope),
    },
    replyTarget: normaliseStringValues(message.replyTarget),
  };
}
