import { decideOccurrence, plainTextCommand, queueCapFor, scheduleEventId, scheduleUserId, type OccurrenceDecision, type Platform } from '@switchboard/core';
import { loadOccurrenceState, recordOccurrence, storeInboundEvent, type Database, type OccurrenceState } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { chatReplyTarget } from '@switchboard/platforms';
import { disarmSchedule, enqueueWake, preciseNow, publishSignal, type RedisClient, type ScheduleQueue, type TurnQueue } from '@switchboard/queue';

/** What an occurrence needs; the schedule worker builds it once. */
export interface OccurrenceDeps {
  db: Database;
  queue: TurnQueue;
  schedules: ScheduleQueue;
  redis: RedisClient;
  redisPrefix: string;
  /** SCHEDULE_CATCHUP_MS */
  catchUpMs: number;
  maxQueuedInput: number;
  log: Logger;
}

export type OccurrenceResult = { decision: OccurrenceDecision; scheduleId: number; conversationId?: number; stored?: 'accepted' | 'duplicate' | 'refused' };

/**
 * One occurrence of a schedule (docs/schedules.md): read the schedule and its
 * conversation, decide, and for `run` store the prompt as the conversation's
 * input exactly as the platforms' ingress does (once, under the key
 * `schedule:<id>:<ms>`, then a wake-up and a signal), so it is answered like
 * any message: one turn, its reply through the outbox. Run twice (a job
 * retried, a worker killed mid-job and its job taken over), the second store
 * is a duplicate and no second turn starts. Throws only on an outage, for
 * BullMQ to retry.
 */
export async function runOccurrence(deps: OccurrenceDeps, occurrence: { scheduleId: number; occurrenceAt: Date }): Promise<OccurrenceResult> {
  const { scheduleId, occurrenceAt } = occurrence;
  const state = await loadOccurrenceState(deps.db, scheduleId);
  const decision = decideOccurrence({
    scheduleStatus: state?.schedule.status ?? null,
    conversationStatus: state?.conversation.status ?? null,
    occurrenceAt,
    now: new Date(),
    catchUpMs: deps.catchUpMs,
  });
  if (decision === 'drop' || !state) {
    await disarmSchedule(deps.schedules, scheduleId);
    return { decision: 'drop', scheduleId };
  }
  const conversationId = state.conversation.id;
  if (decision !== 'run') {
    await recordOccurrence(deps.db, { scheduleId, occurrenceAt, outcome: decision });
    deps.log.warn({ scheduleId, conversationId, occurrenceAt: occurrenceAt.toISOString(), decision }, decision === 'missed' ? 'schedule occurrence missed: later than SCHEDULE_CATCHUP_MS' : 'schedule occurrence skipped: conversation suspended');
    return { decision, scheduleId, conversationId };
  }
  const stored = await storeOccurrence(deps, { state, occurrenceAt });
  await recordOccurrence(deps.db, { scheduleId, occurrenceAt, outcome: 'ran' });
  return { decision, scheduleId, conversationId, stored };
}

async function storeOccurrence(deps: OccurrenceDeps, input: { state: OccurrenceState; occurrenceAt: Date }): Promise<'accepted' | 'duplicate' | 'refused'> {
  const { schedule, conversation } = input.state;
  const address = { platform: conversation.platform as Platform, accountId: conversation.accountId, chatId: conversation.chatId, threadId: conversation.threadId, userScope: conversation.userScope };
  const stored = await storeInboundEvent(deps.db, {
    platform: conversation.platform,
    accountId: conversation.accountId,
    eventId: scheduleEventId(schedule.id, input.occurrenceAt),
    conversationKey: conversation.key,
    chatId: conversation.chatId,
    threadId: conversation.threadId,
    userScope: conversation.userScope,
    userId: scheduleUserId(schedule.id),
    // The prompt is text for the model, never a chat command, whatever it starts with.
    text: schedule.prompt,
    command: plainTextCommand,
    replyTarget: chatReplyTarget(address),
    refuseAtPending: queueCapFor('input', deps.maxQueuedInput),
  });
  if (stored.status === 'refused') return 'refused';
  if (stored.duplicate && stored.status !== 'pending') return 'duplicate';
  const storedAt = preciseNow();
  if (!stored.duplicate) {
    publishSignal(deps.redis, deps.redisPrefix, { kind: 'input', conversationId: stored.conversationId, inboundEventId: stored.inboundEventId, storedAt }).catch((err: unknown) =>
      deps.log.warn({ err, conversationId: stored.conversationId }, 'signal not published; the turn will see the input when it next reads'),
    );
  }
  await enqueueWake(deps.queue, { conversationId: stored.conversationId, inboundEventId: stored.inboundEventId, reason: 'inbound', ...(stored.duplicate ? {} : { storedAt }) });
  return stored.duplicate ? 'duplicate' : 'accepted';
}
