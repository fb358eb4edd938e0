import type { Redis } from 'ioredis';
import { decideAccess, pairingNotices, resolveConversationKey, type AccessPolicy } from '@switchboard/core';
import { isPairedUser, queueNoticeForAddress, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { InboundMessage } from '@switchboard/platforms';
import { enqueueWake, type TurnQueue } from '@switchboard/queue';
import { offerPairing } from './offer-pairing.ts';

export interface AdmissionDeps {
  db: Database;
  queue: TurnQueue;
  redis: Redis;
  redisPrefix: string;
  log: Logger;
  policy: AccessPolicy;
  rateLimitPerMinute: number;
}

export type Admission = 'allow' | 'not_allowed' | 'rate_limited';

export const admissionNotices = {
  not_allowed: 'Sorry, I am not available to you here. Ask the people who run this bot to add you.',
  rate_limited: 'You are sending messages faster than I can answer. Please wait a minute before sending more.',
  pairing_full: pairingNotices.full,
} as const;

/** How long a refused user is not told again. */
const noticeQuietSeconds = { not_allowed: 24 * 3600, rate_limited: 60, pairing_full: 3600 } as const;

type Notice = keyof typeof admissionNotices;

/**
 * Access: allowlists per kind of chat (the environment's ids and roles, and
 * the paired users stored in Postgres; under DM_POLICY=pairing an unknown
 * user's DM is offered a code instead of refused), and a per-user message rate
 * (only /stop is exempt, so it always works; every other command posts a
 * reply or calls the summariser, so it counts like a message: issue 17). A refused message is never
 * stored and never starts a turn; the user is told once per quiet period.
 * Redis trouble fails open: the rate limit is a courtesy, storing is not.
 */
export async function admitInbound(deps: AdmissionDeps, message: InboundMessage, isStop: boolean): Promise<Admission> {
  const request = { platform: message.platform, userId: message.userId, isDirect: message.address.userScope === '', roles: message.roles };
  let access = decideAccess(deps.policy, request);
  // Paired users are the stored half of the allowlist: looked up only when the environment's half did not allow.
  if (access !== 'allow') access = decideAccess(deps.policy, { ...request, paired: await isPairedUser(deps.db, message.platform, message.userId) });
  if (access === 'needs_pairing') {
    if ((await offerPairing(deps, message)) === 'full') await tellOnce(deps, message, 'pairing_full');
    return 'not_allowed';
  }
  let verdict: Admission = access === 'allow' ? 'allow' : 'not_allowed';
  if (verdict === 'allow' && deps.rateLimitPerMinute > 0 && !isStop) {
    // A window opens with the user's first message and lasts a minute (EXPIRE NX), so bursts are judged whole.
    const key = `${deps.redisPrefix}:rate:${message.platform}:${message.address.accountId}:${message.userId}`;
    try {
      const [[, count]] = (await deps.redis.multi().incr(key).expire(key, 60, 'NX').exec()) as [[Error | null, number]];
      if (count > deps.rateLimitPerMinute) verdict = 'rate_limited';
    } catch (err) {
      deps.log.warn({ err }, 'rate limit unavailable; admitting');
    }
  }
  if (verdict !== 'allow') await tellOnce(deps, message, verdict);
  return verdict;
}

async function tellOnce(deps: AdmissionDeps, message: InboundMessage, verdict: Notice): Promise<void> {
  const key = `${deps.redisPrefix}:told:${verdict}:${message.platform}:${message.address.accountId}:${message.userId}`;
  try {
    const first = await deps.redis.set(key, '1', 'EX', noticeQuietSeconds[verdict], 'NX');
    if (first !== 'OK') return;
    const conversationId = await queueNoticeForAddress(deps.db, {
      conversationKey: resolveConversationKey(message.address),
      platform: message.platform,
      accountId: message.address.accountId,
      chatId: message.address.chatId,
      threadId: message.address.threadId,
      userScope: message.address.userScope,
      target: message.replyTarget,
      text: admissionNotices[verdict],
    });
    await enqueueWake(deps.queue, { conversationId, inboundEventId: null, reason: 'outbox' }, `notice-${conversationId}-${Date.now()}`);
  } catch (err) {
    deps.log.warn({ err, verdict }, 'refusal notice not queued');
  }
}
