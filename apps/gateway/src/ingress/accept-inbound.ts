import type { RedisClient } from '@switchboard/queue';
import type { GatewayConfig } from '@switchboard/config';
import { isApprovalCommand, isRetryableCode, parseChatCommand, queueCapFor, signalOfCommand, type ErrorCodeOf } from '@switchboard/core';
import { queueOverflowNotice, storeInboundEvent, type Database, type StoreDeadline, type StoredInbound } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { InboundMessage, telegramUnknownChatType } from '@switchboard/platforms';
import { enqueueWake, preciseNow, publishSignal, type TurnQueue } from '@switchboard/queue';
import { answerApprovalCommand } from '../approvals/answer-approval.ts';
import { admitInbound, refusedAnswerMaySpeak, type AdmissionDeps } from './admission.ts';
import { classifyStoreError, type InvalidInputReason } from './classify-store-error.ts';
import { inboundToStore } from './inbound-to-store.ts';

export type IngressOutcome = 'accepted' | 'duplicate' | 'refused' | 'not_allowed' | 'rate_limited' | 'invalid_input';

type IngressErrorCode = ErrorCodeOf<'ingress'>;

const ingressErrorMessages: Record<IngressErrorCode, string> = {
  STORE_FAILED: 'could not store the event',
  STORE_TOO_LATE: 'the event could not be stored before the platform stopped waiting; it was not stored',
  ENQUEUE_FAILED: 'could not hand the event to a worker',
};

export class IngressError extends Error {
  readonly code: IngressErrorCode;
  /** Always true today: every ingress failure is answered 503 so the platform re-delivers. */
  readonly retryable: boolean;
  constructor(code: IngressErrorCode, cause: unknown) {
    super(ingressErrorMessages[code], { cause });
    this.name = 'IngressError';
    this.code = code;
    this.retryable = isRetryableCode(code);
  }
}

export interface IngressDeps extends AdmissionDeps {
  db: Database;
  /** APPROVERS: who may answer any approval question besides the user asked. */
  approvers: readonly string[];
  queue: TurnQueue;
  /** Fail-fast connection used to publish signals to the worker running the conversation. */
  redis: RedisClient;
  redisPrefix: string;
  maxQueuedInput: number;
  log: Logger;
  /**
   * Counts events acknowledged but never stored (switchboard_inbound_rejected_total): ones Postgres can
   * never store, and Telegram updates from a chat type the parser does not know. Absent in tests that do not read metrics.
   */
  countRejected?: (platform: string, reason: InvalidInputReason | typeof telegramUnknownChatType) => void;
}

export const overflowNotice = 'You have sent more messages than I can keep up with. I will answer what I have; please wait before sending more.';

/**
 * The shared ingress step for every platform: store once, then
 * wake the conversation and signal a running turn. Throws IngressError when
 * storing or enqueueing fails, so the route answers 503 and the platform
 * re-delivers; with a `deadline` (the platform's wait for an answer) a store
 * that would come after it is refused the same way rather than made late. An event Postgres can never store (a data error, not an outage)
 * is `invalid_input`: acknowledged, logged and counted, so re-delivery cannot
 * block the platform's stream. A re-delivery of an event that was stored but never handed
 * over is enqueued again under the same job id, so it can never run twice.
 */
export async function acceptInbound(deps: IngressDeps, message: InboundMessage, deadline?: StoreDeadline): Promise<IngressOutcome> {
  // Parsed once, here: the command (or `text`, for plain text) is stored with the event so no later step reads the text again.
  // A file's caption is never a command: "/stop" under a photo must not drop the photo (docs/media.md).
  const command = message.attachments && message.attachments.length > 0 ? null : parseChatCommand(message.text);
  const signal = signalOfCommand(command);
  const isAnswer = command !== null && isApprovalCommand(command);
  // Only /stop and approval answers skip the message rate and the input cap: they must always work, and make the bot say one line at most.
  // They count in a looser window of their own, and an answer that decided nothing counts as a message after all (issue 30, finding 5).
  let admission;
  try {
    admission = await admitInbound(deps, message, signal === 'stop' || isAnswer);
  } catch (error) {
    // Admission fails only on Postgres (the paired users, a pairing code); Redis trouble fails open inside it. A row
    // Postgres can never take (an unpaired user's id past its index-row limit: found by the fuzzer, issue 30) is
    // the event's fault like a store's, so acknowledged and dropped: a 503 would be re-delivered for good.
    const failure = classifyStoreError(error);
    if (failure.kind === 'outage') throw new IngressError('STORE_FAILED', error);
    deps.log.warn({ code: 'INVALID_INPUT', platform: message.platform, reason: failure.reason, sqlState: failure.sqlState }, 'access check cannot be stored; acknowledged and dropped');
    deps.countRejected?.(message.platform, failure.reason);
    return 'invalid_input';
  }
  if (admission !== 'allow') return admission;
  if (isAnswer) return answerApproval(deps, message, command);
  let stored;
  try {
    stored = await storeInboundEvent(deps.db, inboundToStore(message, command, { refuseAtPending: queueCapFor(signal, deps.maxQueuedInput) }), deadline);
  } catch (error) {
    const failure = classifyStoreError(error);
    if (failure.kind === 'outage') throw new IngressError('STORE_FAILED', error);
    // Never the text or the ids: they are what Postgres refused, and they are the user's.
    deps.log.warn({ code: 'INVALID_INPUT', platform: message.platform, reason: failure.reason, sqlState: failure.sqlState }, 'inbound event cannot be stored; acknowledged and dropped');
    deps.countRejected?.(message.platform, failure.reason);
    return 'invalid_input';
  }
  if (stored.tooLate) throw new IngressError('STORE_TOO_LATE', undefined);
  const storedAt = preciseNow();
  if (stored.duplicate && stored.status !== 'pending') return 'duplicate';
  if (stored.status === 'refused') {
    await tellOverflowOnce(deps, message, stored.conversationId);
    return 'refused';
  }
  return handOverStored(deps, { stored, signal, storedAt });
}

/**
 * A stored, pending event handed to a worker: wakes its conversation (a
 * re-delivery under the same job id, so it never runs twice) and, for a new
 * event, signals a running turn. Shared by every platform and by triggered
 * turns (hooks/accept-hook.ts). Throws IngressError ENQUEUE_FAILED.
 */
export async function handOverStored(
  deps: Pick<IngressDeps, 'queue' | 'redis' | 'redisPrefix' | 'log'>,
  handOver: { stored: StoredInbound; signal: 'input' | 'stop' | 'none'; storedAt: number },
): Promise<'accepted' | 'duplicate'> {
  const { stored, signal, storedAt } = handOver;
  const wake = enqueueWake(deps.queue, { conversationId: stored.conversationId, inboundEventId: stored.inboundEventId, reason: 'inbound', ...(stored.duplicate ? {} : { storedAt }) });
  // The signal goes out beside the enqueue, not after it: interrupt latency is measured from storedAt.
  if (!stored.duplicate && signal !== 'none') {
    publishSignal(deps.redis, deps.redisPrefix, { kind: signal, conversationId: stored.conversationId, inboundEventId: stored.inboundEventId, storedAt }).catch(
      (err: unknown) => deps.log.warn({ err, conversationId: stored.conversationId }, 'signal not published; the turn will see the input when it next reads'),
    );
  }
  try {
    await wake;
  } catch (error) {
    throw new IngressError('ENQUEUE_FAILED', error);
  }
  return stored.duplicate ? 'duplicate' : 'accepted';
}

/** An approval answer is decided where it arrives: never turn input, never a signal to the running turn (docs/codex.md, "Approvals in chat"). */
async function answerApproval(deps: IngressDeps, message: InboundMessage, command: NonNullable<ReturnType<typeof parseChatCommand>>): Promise<IngressOutcome> {
  try {
    return await answerApprovalCommand(deps, message, command, () => refusedAnswerMaySpeak(deps, message));
  } catch (error) {
    const failure = classifyStoreError(error);
    if (failure.kind === 'outage') throw new IngressError('STORE_FAILED', error);
    deps.log.warn({ code: 'INVALID_INPUT', platform: message.platform, reason: failure.reason, sqlState: failure.sqlState }, 'approval answer cannot be stored; acknowledged and dropped');
    deps.countRejected?.(message.platform, failure.reason);
    return 'invalid_input';
  }
}

async function tellOverflowOnce(deps: IngressDeps, message: InboundMessage, conversationId: number): Promise<void> {
  try {
    const queued = await queueOverflowNotice(deps.db, { conversationId, platform: message.platform, target: message.replyTarget, text: overflowNotice });
    if (queued) await enqueueWake(deps.queue, { conversationId, inboundEventId: null, reason: 'outbox' }, `overflow-${conversationId}-${Date.now()}`);
  } catch (err) {
    // The refusal is stored; the recovery sweep delivers a queued notice even if this wake-up was lost.
    deps.log.warn({ err, conversationId }, 'overflow notice not queued');
  }
}

/** The ingress dependencies every route and the Discord connection share, built from the config once. */
export function createIngressDeps(
  config: GatewayConfig,
  clients: { db: Database; queue: TurnQueue; redis: RedisClient; log: Logger; countRejected?: IngressDeps['countRejected'] },
): IngressDeps {
  return {
    ...clients,
    approvers: config.APPROVERS,
    redisPrefix: config.REDIS_PREFIX,
    maxQueuedInput: config.MAX_QUEUED_INPUT,
    rateLimitPerMinute: config.USER_RATE_LIMIT_PER_MINUTE,
    policy: {
      dmPolicy: config.DM_POLICY,
      groupPolicy: config.GROUP_POLICY,
      allowedUsers: {
        telegram: new Set(config.TELEGRAM_ALLOWED_USERS),
        slack: new Set(config.SLACK_ALLOWED_USERS),
        discord: new Set(config.DISCORD_ALLOWED_USERS),
      },
      allowedDiscordRoles: new Set(config.DISCORD_ALLOWED_ROLES),
    },
  };
}
