import { resolveConversationKey } from '@switchboard/core';
import { storeInboundEvent, type Sql } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { InboundMessage } from '@switchboard/platforms';
import { enqueueWake, type TurnQueue } from '@switchboard/queue';

export type IngressOutcome = 'accepted' | 'duplicate';

export class IngressError extends Error {
  readonly code: 'STORE_FAILED' | 'ENQUEUE_FAILED';
  constructor(code: 'STORE_FAILED' | 'ENQUEUE_FAILED', cause: unknown) {
    super(code === 'STORE_FAILED' ? 'could not store the event' : 'could not hand the event to a worker', { cause });
    this.name = 'IngressError';
    this.code = code;
  }
}

export interface IngressDeps {
  sql: Sql;
  queue: TurnQueue;
  log: Logger;
}

/**
 * The shared ingress step for every platform (DESIGN §4): store once, then
 * wake the conversation. Throws IngressError when either step fails so the
 * route answers 503 and the platform re-delivers; a re-delivery of an event
 * that was stored but never handed over is enqueued again under the same job
 * id, so it can never run twice.
 */
export async function acceptInbound(deps: IngressDeps, message: InboundMessage): Promise<IngressOutcome> {
  let stored;
  try {
    stored = await storeInboundEvent(deps.sql, {
      platform: message.platform,
      accountId: message.address.accountId,
      eventId: message.eventId,
      conversationKey: resolveConversationKey(message.address),
      chatId: message.address.chatId,
      threadId: message.address.threadId,
      userScope: message.address.userScope,
      userId: message.userId,
      text: message.text,
      replyTarget: message.replyTarget,
    });
  } catch (error) {
    throw new IngressError('STORE_FAILED', error);
  }
  if (stored.duplicate && stored.status === 'done') return 'duplicate';
  try {
    await enqueueWake(deps.queue, { conversationId: stored.conversationId, inboundEventId: stored.inboundEventId, reason: 'inbound' });
  } catch (error) {
    throw new IngressError('ENQUEUE_FAILED', error);
  }
  return stored.duplicate ? 'duplicate' : 'accepted';
}
