import type { RedisClient } from '@switchboard/queue';
import { isRetryableCode, type ErrorCodeOf } from '@switchboard/core';
import {
  deleteConversation,
  lockRunningTurns,
  releaseHeldInput,
  resetConversationSession,
  resumeConversation,
  supersedeTurns,
  suspendConversation,
  suspendRestartLoops,
  type DbExecutor,
  type DeleteConversationResult,
  type ResetResult,
  type RestartLoopSuspension,
  type ResumeResult,
  type SuspendResult,
} from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { enqueueCompaction, enqueueWake, publishSignal, type TurnQueue } from '@switchboard/queue';
import { eventsOf, type SessionChange } from './action-events.ts';
import { changeOnce, type AlreadyApplied, type Door } from './door.ts';
import { emitInOrder, type EmitLifecycleEvent } from './lifecycle-emitter.ts';
import { createSettingActions, type SettingActions, type SettingDeps } from './setting-actions.ts';

export interface ActionDeps extends SettingDeps {
  emit: EmitLifecycleEvent;
  log: Logger;
  /** How an operator's action reaches the worker holding the conversation (stop signals, wake-ups, compaction jobs). */
  reach?: { redis: RedisClient; prefix: string; queue: TurnQueue };
}

export type ResetOutcome = ResetResult | AlreadyApplied;
export type SuspendOutcome = SuspendResult;
export type ResumeOutcome = (ResumeResult & { kind: 'resumed'; releasedInput: number }) | Exclude<ResumeResult, { kind: 'resumed' }>;
export type DeleteOutcome = DeleteConversationResult;
export type ReachOutcome<T> = { kind: 'sent'; value: T } | { kind: 'unavailable'; cause: unknown };

/** What can be done to a conversation: the actions below, and the settings its turns read (setting-actions.ts). */
export interface ConversationActions extends SettingActions {
  /** /new, /reset and the admin reset: finalize the current session, start a fresh one, clear the restart counter. */
  reset(conversationId: number, reason: 'new' | 'reset' | 'operator', door: Door<ResetOutcome>): Promise<ResetOutcome>;
  /** Park the session chain; the next message starts a fresh session until resumed. */
  suspend(conversationId: number, reason: string, door: Door<SuspendOutcome>): Promise<SuspendOutcome>;
  /** Restore the pre-suspension session (one started meanwhile is finalized) and release input a restart loop held back. */
  resume(conversationId: number, door: Door<ResumeOutcome>): Promise<ResumeOutcome>;
  /** Remove the conversation and everything of it, when `confirmKey` is its key. */
  remove(conversationId: number, confirmKey: string, door: Door<DeleteOutcome>): Promise<DeleteOutcome>;
  /** An operator's stop: whatever turn runs stops at its next safe point (docs/turns.md). */
  requestStop(conversationId: number): Promise<ReachOutcome<boolean>>;
  /** An operator's compaction: a job the worker holding the conversation runs, meant for `sessionId` (null: whatever is current then). */
  requestCompaction(conversationId: number, sessionId: number | null, requestedBy: string): Promise<ReachOutcome<string | undefined>>;
  /** The restart-loop guard (docs/restarts.md): conversations at the threshold (restarts, or runtime crashes in a row) suspended, each announced like an operator's suspension. */
  suspendRestartLoops(threshold: number): Promise<RestartLoopSuspension[]>;
}

/**
 * The one home of what can be done to a conversation (issue 20). Chat
 * commands (the worker) and the admin API (the gateway) are two doors to
 * these actions: each writes the change once, in one transaction, and
 * announces it with the lifecycle events of eventsOf, in one order, after
 * the commit (no one hears of a change that did not happen).
 */
export function createConversationActions(deps: ActionDeps): ConversationActions {
  const announce = (change: SessionChange) => emitInOrder(deps.emit, eventsOf(change));
  return {
    ...createSettingActions(deps),
    ...createRequestActions(deps),
    async reset(conversationId, reason, door) {
      const change = (tx: DbExecutor) => resetConversationSession(tx, conversationId, reason);
      // Through the chat the command's holding runs no turn beside it: once per event is the fence it needs.
      const { outcome, superseded } =
        door.kind === 'chat' ? { outcome: await changeOnce(deps.db, door, change), superseded: [] } : await changeFenced(deps, door, { conversationId, change, happened: (o) => o.kind === 'reset' });
      if (outcome.kind !== 'reset') return outcome;
      await stopSuperseded(deps, conversationId, superseded);
      await announce({ kind: 'reset', conversationId, reason, oldSessionId: outcome.oldSessionId, newSessionId: outcome.newSessionId });
      return outcome;
    },
    async suspend(conversationId, reason, door) {
      const { outcome, superseded } = await changeFenced(deps, door, {
        conversationId,
        change: (tx) => suspendConversation(tx, conversationId, reason),
        happened: (o) => o.kind === 'suspended',
      });
      if (outcome.kind !== 'suspended') return outcome;
      await stopSuperseded(deps, conversationId, superseded);
      await announce({ kind: 'suspended', conversationId, reason, sessionId: outcome.preSuspendSessionId, sessionEnd: 'parked' });
      return outcome;
    },
    async resume(conversationId, door) {
      const { outcome, superseded } = await changeFenced(deps, door, {
        conversationId,
        change: (tx) => resumeAndRelease(tx, conversationId),
        happened: (o) => o.kind === 'resumed',
      });
      if (outcome.kind !== 'resumed') return outcome;
      await stopSuperseded(deps, conversationId, superseded);
      await announce({ kind: 'resumed', conversationId, restoredSessionId: outcome.restoredSessionId, finalizedSessionId: outcome.finalizedSessionId });
      if (outcome.releasedInput > 0) await wakeAfterResume(deps, conversationId);
      return outcome;
    },
    async remove(conversationId, confirmKey, door) {
      const { outcome } = await changeFenced(deps, door, {
        conversationId,
        change: (tx) => deleteConversation(tx, conversationId, confirmKey),
        happened: (o) => o.kind === 'deleted',
      });
      if (outcome.kind !== 'deleted') return outcome;
      // A turn still running has nothing left to commit to; stop it rather than let it fail at commit.
      sendStop(deps, conversationId).catch((err: unknown) => deps.log.warn({ err, conversationId }, 'stop signal for a deleted conversation not published'));
      await announce({ kind: 'deleted', conversationId, finalizedSessionId: outcome.finalizedSessionId });
      return outcome;
    },
    async suspendRestartLoops(threshold) {
      const suspended = await suspendRestartLoops(deps.db, threshold);
      for (const s of suspended) await announce({ kind: 'suspended', conversationId: s.conversationId, reason: s.reason, sessionId: s.sessionId, sessionEnd: s.sessionEnd });
      return suspended;
    },
  };
}

/** What an operator asks of the worker holding the conversation: sent, or said to be unavailable. */
function createRequestActions(deps: ActionDeps): Pick<ConversationActions, 'requestStop' | 'requestCompaction'> {
  return {
    async requestStop(conversationId) {
      return reach(() => sendStop(deps, conversationId));
    },
    async requestCompaction(conversationId, sessionId, requestedBy) {
      const queue = requireReach(deps).queue;
      // Named in the job, so that requests for one session coalesce: the first compacts it, the rest find it superseded.
      return reach(() => enqueueCompaction(queue, { conversationId, requestedBy, ...(sessionId !== null ? { sessionId } : {}) }));
    },
  };
}

interface FencedChange<T> {
  conversationId: number;
  change: (tx: DbExecutor) => Promise<T>;
  /** Whether the outcome is a change of session (and so supersedes the running turns). */
  happened: (outcome: T) => boolean;
}

/**
 * Runs a change in one transaction. Through the operator's door it is fenced
 * like a commit: the running turns are locked first (the order a commit
 * locks rows in, so neither waits for the other in a cycle), and superseded
 * only if the change happened; the audit row is written in the same
 * transaction. A chat command holds the lease, so it needs neither.
 */
async function changeFenced<T>(deps: ActionDeps, door: Door<T>, fenced: FencedChange<T>): Promise<{ outcome: T; superseded: number[] }> {
  const { conversationId, change, happened } = fenced;
  if (door.kind === 'chat') return { outcome: await change(deps.db), superseded: [] };
  return deps.db.transaction(async (tx) => {
    const running = await lockRunningTurns(tx, conversationId);
    const outcome = await change(tx);
    const superseded = happened(outcome) ? running : [];
    await supersedeTurns(tx, superseded);
    await door.record(tx, outcome, superseded);
    return { outcome, superseded };
  });
}

async function resumeAndRelease(tx: DbExecutor, conversationId: number): Promise<ResumeOutcome> {
  const resumed = await resumeConversation(tx, conversationId);
  if (resumed.kind !== 'resumed') return resumed;
  // A restart-loop suspension held the cut-off turn's input back; resuming runs it again, in order.
  return { ...resumed, releasedInput: await releaseHeldInput(tx, conversationId) };
}

/** The superseded turn has nothing left to commit to: stopped now, rather than running on to a refused commit. */
async function stopSuperseded(deps: ActionDeps, conversationId: number, superseded: number[]): Promise<void> {
  if (superseded.length === 0 || !deps.reach) return;
  await sendStop(deps, conversationId).catch((err: unknown) => deps.log.warn({ err, conversationId }, 'stop signal for a superseded turn not published; it stops at its refused commit'));
}

async function wakeAfterResume(deps: ActionDeps, conversationId: number): Promise<void> {
  // If this wake-up is lost (or there is no queue to add it to), the recovery sweep finds the released input anyway.
  if (!deps.reach) return;
  await enqueueWake(deps.reach.queue, { conversationId, inboundEventId: null, reason: 'operator' }, `resume-${conversationId}-${Date.now()}`).catch((err: unknown) =>
    deps.log.warn({ err, conversationId }, 'wake-up after resume not queued; the recovery sweep will run the input'),
  );
}

/** inboundEventId 0: an operator stop, which stops whatever runs (docs/turns.md). */
async function sendStop(deps: ActionDeps, conversationId: number): Promise<boolean> {
  const { redis, prefix } = requireReach(deps);
  return publishSignal(redis, prefix, { kind: 'stop', conversationId, inboundEventId: 0, storedAt: Date.now() });
}

async function reach<T>(send: () => Promise<T>): Promise<ReachOutcome<T>> {
  try {
    return { kind: 'sent', value: await send() };
  } catch (cause) {
    return { kind: 'unavailable', cause };
  }
}

/** A programming error, not an outcome: an action that must reach the lease holder was built without the means to. */
export class MissingReachError extends Error {
  readonly code: Extract<ErrorCodeOf<'worker'>, 'ACTION_NEEDS_REACH'> = 'ACTION_NEEDS_REACH';
  /** From the catalog (docs/errors.md): false, a programming error does not go away by waiting. */
  readonly retryable = isRetryableCode(this.code);
  constructor() {
    super('this action reaches the worker holding the conversation: ActionDeps.reach is required');
    this.name = 'MissingReachError';
  }
}

function requireReach(deps: ActionDeps): NonNullable<ActionDeps['reach']> {
  if (!deps.reach) throw new MissingReachError();
  return deps.reach;
}
