import type { RedisClient } from '@switchboard/queue';
import { decideAccess, resolveConversationKey, type AccessPolicy } from '@switchboard/core';
import { isPairedUser, queueNoticeForAddress, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { InboundMessage } from '@switchboard/platforms';
import { enqueueWake, type TurnQueue } from '@switchboard/queue';
import { offerPairing } from './offer-pairing.ts';

export interface AdmissionDeps {
  db: Database;
  queue: TurnQueue;
  redis: RedisClient;
  redisPrefix: string;
  log: Logger;
  policy: AccessPolicy;
  rateLimitPerMinute: number;
}

export type Admission = 'allow' | 'not_allowed' | 'rate_limited';

export const admissionNotices = {
  not_allowed: 'Sorry, I am not available to you here. Ask the people who run this bot to add you.',
  rate_limited: 'You are sending messages faster than I can answer. Please wait a minute before sending more.',
} as const;

/**
 * /stop and approval answers must always work, so they skip the message rate;
 * but each still writes rows, wakes a worker and makes the bot say a line, so
 * a flood of them in a shared group would spend the bot's platform quota and
 * other users' replies would get 429s (issue 30, finding 5). They count in a
 * window of their own, this many times looser than the message rate.
 */
export const exemptRateFactor = 3;

/** How long a refused user is not told again. */
const noticeQuietSeconds = { not_allowed: 24 * 3600, rate_limited: 60 } as const;

type Notice = keyof typeof admissionNotices;

/**
 * Access: allowlists per kind of chat (the environment's ids and roles, and
 * the paired users stored in Postgres; under DM_POLICY=pairing an unknown
 * user's DM is offered a code instead of refused), and a per-user message rate
 * (`exempt`: /stop and approval answers, counted in their own looser window,
 * exemptRateFactor; every other command posts a reply or calls the
 * summariser, so it counts like a message: issue 17). A refused message is never
 * stored and never starts a turn; the user is told once per quiet period.
 * Redis trouble fails open: the rate limit is a courtesy, storing is not.
 */
export async function admitInbound(deps: AdmissionDeps, message: InboundMessage, exempt: boolean): Promise<Admission> {
  const request = { platform: message.platform, userId: message.userId, isDirect: message.address.userScope === '', roles: message.roles };
  let access = decideAccess(deps.policy, request);
  // Paired users are the stored half of the allowlist: looked up only when the environment's half did not allow.
  if (access !== 'allow') access = decideAccess(deps.policy, { ...request, paired: await isPairedUser(deps.db, message.platform, message.userId) });
  if (access === 'needs_pairing') {
    // A user an operator denied gets the refusal (once a day) instead of a code, for pairingRules.deniedForMs.
    if ((await offerPairing(deps, message)) === 'denied') await tellOnce(deps, message, 'not_allowed');
    return 'not_allowed';
  }
  let verdict: Admission = access === 'allow' ? 'allow' : 'not_allowed';
  if (verdict === 'allow' && (await overRate(deps, message, exempt ? 'exempt' : 'messages'))) verdict = 'rate_limited';
  if (verdict !== 'allow') await tellOnce(deps, message, verdict);
  return verdict;
}

/**
 * One user's window: adds the weight and, only when that created the key
 * (the count equals the weight), sets its minute. One command per message
 * once the window is open, instead of MULTI, INCRBY, EXPIRE NX and EXEC
 * (issue 31); atomic as the transaction was, so a key never lives without
 * its expiry.
 */
const countInWindowScript = `local n = redis.call('incrby', KEYS[1], ARGV[1]) if n == tonumber(ARGV[1]) then redis.call('expire', KEYS[1], ARGV[2]) end return n`;

/**
 * Counts one more in the user's window and says whether it is over the limit
 * (`messages`: USER_RATE_LIMIT_PER_MINUTE; `exempt`: exemptRateFactor times
 * that). A window opens with the user's first message and lasts a minute
 * (countInWindowScript), so bursts are judged whole. Redis trouble: not over.
 */
export async function overRate(deps: Pick<AdmissionDeps, 'redis' | 'redisPrefix' | 'log' | 'rateLimitPerMinute'>, message: InboundMessage, window: 'messages' | 'exempt'): Promise<boolean> {
  if (deps.rateLimitPerMinute <= 0) return false;
  const key = `${deps.redisPrefix}:${window === 'messages' ? 'rate' : 'rate-exempt'}:${message.platform}:${message.address.accountId}:${message.userId}`;
  const limit = window === 'messages' ? deps.rateLimitPerMinute : deps.rateLimitPerMinute * exemptRateFactor;
  // A message with files weighs one more per file (issue 30, finding 3): each file is a download, and maybe a transcription, for a worker.
  const weight = 1 + (message.attachments?.length ?? 0);
  try {
    const count = Number(await deps.redis.eval(countInWindowScript, 1, key, weight, 60));
    return count > limit;
  } catch (err) {
    deps.log.warn({ err }, 'rate limit unavailable; admitting');
    return false;
  }
}

/**
 * An approval answer that decided nothing ("nothing pending", "already
 * answered", not the asked user) was exempt only because it might have
 * decided something: it counts as a message after all, and its refusal line
 * is said at most once a minute per user (issue 30, finding 5). True: say it.
 */
export async function refusedAnswerMaySpeak(deps: AdmissionDeps, message: InboundMessage): Promise<boolean> {
  if (await overRate(deps, message, 'messages')) {
    await tellOnce(deps, message, 'rate_limited');
    return false;
  }
  const key = `${deps.redisPrefix}:told:answer-refused:${message.platform}:${message.address.accountId}:${message.userId}`;
  try {
    return (await deps.redis.set(key, '1', 'EX', 60, 'NX')) === 'OK';
  } catch (err) {
    deps.log.warn({ err }, 'refusal quiet period unavailable; answering');
    return true;
  }
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
