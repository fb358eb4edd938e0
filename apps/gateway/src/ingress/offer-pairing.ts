import { decidePairingRequest, generatePairingCode, renderPairingCodeNotice, resolveConversationKey } from '@switchboard/core';
import { requestPairing, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { InboundMessage } from '@switchboard/platforms';
import { enqueueWake, type TurnQueue } from '@switchboard/queue';

export type PairingOffer = 'issued' | 'reminded' | 'quiet' | 'denied';

/** What offering a code uses (a part of admission's deps, so this module need not import admission.ts). */
export interface PairingOfferDeps {
  db: Database;
  queue: TurnQueue;
  log: Logger;
}

/**
 * An unknown user's direct message under DM_POLICY=pairing (docs/admin.md,
 * "Pairing"): the message itself is never stored, so nothing reaches the
 * model. The code's line is queued in the outbox in the pairing's own
 * transaction and delivered by a worker like any reply; a lost wake-up is
 * made good by the recovery sweep. Postgres failing throws, so the platform
 * is answered 503 and re-delivers (the code is not lost: the re-delivery finds it).
 */
export async function offerPairing(deps: PairingOfferDeps, message: InboundMessage): Promise<PairingOffer> {
  const { address } = message;
  const outcome = await requestPairing(deps.db, {
    platform: message.platform,
    accountId: address.accountId,
    userId: message.userId,
    conversation: { key: resolveConversationKey(address), chatId: address.chatId, threadId: address.threadId, userScope: address.userScope },
    target: message.replyTarget,
    decide: decidePairingRequest,
    newCode: generatePairingCode,
    render: renderPairingCodeNotice,
  });
  if (outcome.kind === 'issued' || outcome.kind === 'reminded') {
    // Never the code itself in the log: it is a credential until approved.
    deps.log.info({ platform: message.platform, outcome: outcome.kind, conversationId: outcome.conversationId }, 'pairing code sent to an unknown user');
    await enqueueWake(deps.queue, { conversationId: outcome.conversationId, inboundEventId: null, reason: 'outbox' }, `pairing-${outcome.conversationId}-${Date.now()}`).catch((err: unknown) =>
      deps.log.warn({ err, conversationId: outcome.conversationId }, 'pairing notice queued but not woken; the recovery sweep delivers it'),
    );
  }
  return outcome.kind;
}
