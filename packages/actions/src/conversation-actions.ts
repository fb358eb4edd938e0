import type { RedisClient } from '@switchboard/queue';
import { isFullAccessProfile, isRetryableCode, type ErrorCodeOf } from '@switchboard/core';
import {
  deleteConversation,
  lockRunningTurns,
  markCommandApplied,
  releaseHeldInput,
  resetConversationSession,
  resumeConversation,
  setBusyMode,
  setConversationRuntime,
  supersedeTurns,
  suspendConversation,
  suspendRestartLoops,
  type Database,
  type DbExecutor,
  type DeleteConversationResult,
  type ResetResult,
  type RestartLoopSuspension,
  type RuntimeSetting,
  type RuntimeSettingChange,
  type ResumeResult,
  type SuspendResult,
} from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { enqueueCompaction, enqueueWake, publishSignal, type TurnQueue } from '@switchboard/queue';
import { eventsOf, type SessionChange } from './action-events.ts';
import { emitInOrder, type EmitLifecycleEvent } from './lifecycle-emitter.ts';

export type BusyModeName = 'interrupt' | 'queue' | 'collect' | 'steer';

export interface ActionDeps {
  db: Database;
  emit: EmitLifecycleEvent;
  log: Logger;
  /** How an operator's action reaches the worker holding the conversation (stop signals, wake-ups, compaction jobs). */
  reach?: { redis: RedisClient; prefix: string; queue: TurnQueue };
  /** CODEX_ALLOW_FULL_ACCESS: whether an operator may set the full-access profile (never the chat, whatever this says). */
  fullAccessAllowed?: boolean;
}

/**
 * Who acts. A chat command runs inside the work loop of the worker holding
 * the conversation's lease, so no turn runs beside it. An operator acts from
 * outside the lease: a change of session is fenced like a commit (a running
 * turn is superseded, its commit refused, its input run again in the session
 * left current), and `record` writes the audit row in the action's own
 * transaction, with what happened.
 *
 * A chat command names its event (`inboundEventId`): the change is applied
 * only if that event is still pending and was not applied before
 * (markCommandApplied, in the change's transaction), so a holding that lost
 * the lease and runs the same command again changes nothing
 * (`already_applied`).
 */
export type Door<T> =
  | { kind: 'chat'; inboundEventId?: number }
  | { kind: 'operator'; record: (tx: DbExecutor, outcome: T, supersededTurnIds: number[]) => Promise<void> };

/** A chat command whose change another holding already applied (or whose event it took): nothing changed. */
export type AlreadyApplied = { kind: 'already_applied' };

export type ResetOutcome = ResetResult | AlreadyApplied;
export type SuspendOutcome = SuspendResult;
export type ResumeOutcome = (ResumeResult & { kind: 'resumed'; releasedInput: number }) | Exclude<ResumeResult, { kind: 'resumed' }>;
export type DeleteOutcome = DeleteConversationResult;
export type BusyModeOutcome = { kind: 'set'; mode: BusyModeName | null } | { kind: 'not_found' } | AlreadyApplied;
/** What the runtime setting is now; or why it was refused (full-access while CODEX_ALLOW_FULL_ACCESS is off, or through the chat). */
export type RuntimeOutcome =
  | ({ kind: 'set' } & RuntimeSetting)
  | { kind: 'not_found' }
  | { kind: 'full_access_disabled' };
export type ReachOutcome<T> = { kind: 'sent'; value: T } | { kind: 'unavailable'; cause: unknown };

export interface ConversationActions {
  /** /new, /reset and the admin reset: finalize the current session, start a fresh one, clear the restart counter. */
  reset(conversationId: number, reason: 'new' | 'reset' | 'operator', door: Door<ResetOutcome>): Promise<ResetOutcome>;
  /** Park the session chain; the next message starts a fresh session until resumed. */
  suspend(conversationId: number, reason: string, door: Door<SuspendOutcome>): Promise<SuspendOutcome>;
  /** Restore the pre-suspension session (one started meanwhile is finalized) and release input a restart loop held back. */
  resume(conversationId: number, door: Door<ResumeOutcome>): Promise<ResumeOutcome>;
  /** Remove the conversation and everything of it, when `confirmKey` is its key. */
  remove(conversationId: number, confirmKey: string, door: Door<DeleteOutcome>): Promise<DeleteOutcome>;
  /** /busy <mode> and the admin busy mode (null: back to the global BUSY_INPUT_MODE). */
  setBusyMode(conversationId: number, mode: BusyModeName | null, door: Door<BusyModeOutcome>): Promise<BusyModeOutcome>;
  /**
   * The runtime a conversation's turns run on and its Codex permission
   * profile (null: the default; a field left out stays). Read at each turn,
   * so the next turn uses it. full-access is refused unless the operator
   * setting allows it, and always through the chat door.
   */
  setRuntime(conversationId: number, change: RuntimeSettingChange, door: Door<RuntimeOutcome>): Promise<RuntimeOutcome>;
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
    async reset(conversationId, reason, door) {
      const change = (tx: DbExecutor) => resetConversationSession(tx, conversationId, reason);
      // Through the chat the command's holding runs no turn beside it: once per event is the fence it needs.
      const { outcome, superseded } =
        door.kind === 'chat' ? { outcome: await changeOnce(deps, door, change), superseded: [] } : await changeFenced(deps, conversationId, door, change, (o) => o.kind === 'reset');
      if (outcome.kind !== 'reset') return outcome;
      await stopSuperseded(deps, conversationId, superseded);
      await announce({ kind: 'reset', conversationId, reason, oldSessionId: outcome.oldSessionId, newSessionId: outcome.newSessionId });
      return outcome;
    },
    async suspend(conversationId, reason, door) {
      const { outcome, superseded } = await changeFenced(deps, conversationId, door, (tx) => suspendConversation(tx, conversationId, reason), (o) => o.kind === 'suspended');
      if (outcome.kind !== 'suspended') return outcome;
      await stopSuperseded(deps, conversationId, superseded);
      await announce({ kind: 'suspended', conversationId, reason, sessionId: outcome.preSuspendSessionId, sessionEnd: 'parked' });
      return outcome;
    },
    async resume(conversationId, door) {
      const { outcome, superseded } = await changeFenced(deps, conversationId, door, (tx) => resumeAndRelease(tx, conversationId), (o) => o.kind === 'resumed');
      if (outcome.kind !== 'resumed') return outcome;
      await stopSuperseded(deps, conversationId, superseded);
      await announce({ kind: 'resumed', conversationId, restoredSessionId: outcome.restoredSessionId, finalizedSessionId: outcome.finalizedSessionId });
      if (outcome.releasedInput > 0) await wakeAfterResume(deps, conversationId);
      return outcome;
    },
    async remove(conversationId, confirmKey, door) {
      const { outcome } = await changeFenced(deps, conversationId, door, (tx) => deleteConversation(tx, conversationId, confirmKey), (o) => o.kind === 'deleted');
      if (outcome.kind !== 'deleted') return outcome;
      // A turn still running has nothing left to commit to; stop it rather than let it fail at commit.
      sendStop(deps, conversationId).catch((err: unknown) => deps.log.warn({ err, conversationId }, 'stop signal for a deleted conversation not published'));
      await announce({ kind: 'deleted', conversationId, finalizedSessionId: outcome.finalizedSessionId });
      return outcome;
    },
    async setBusyMode(conversationId, mode, door) {
      const change = async (tx: DbExecutor): Promise<BusyModeOutcome> => ((await setBusyMode(tx, conversationId, mode)) ? { kind: 'set', mode } : { kind: 'not_found' });
      if (door.kind === 'chat') return changeOnce(deps, door, change);
      // No session moves, so no turn to supersede: the worker reads the mode afresh at each pass.
      return deps.db.transaction(async (tx) => {
        const outcome = await change(tx);
        await door.record(tx, outcome, []);
        return outcome;
      });
    },
    async setRuntime(conversationId, change, door) {
      const fullAccessAllowed = door.kind === 'operator' && deps.fullAccessAllowed === true;
      const apply = async (tx: DbExecutor): Promise<RuntimeOutcome> => {
        if (isFullAccessProfile(change.permissionProfile) && !fullAccessAllowed) return { kind: 'full_access_disabled' };
        const setting = await setConversationRuntime(tx, conversationId, change);
        return setting ? { kind: 'set', ...setting } : { kind: 'not_found' };
      };
      if (door.kind === 'chat') return apply(deps.db);
      // No session moves, so nothing to fence (as busy mode): the worker reads the setting afresh at each turn.
      return deps.db.transaction(async (tx) => {
        const outcome = await apply(tx);
        await door.record(tx, outcome, []);
        return outcome;
      });
    },
    async requestStop(conversationId) {
      return reach(() => sendStop(deps, conversationId));
    },
    async requestCompaction(conversationId, sessionId, requestedBy) {
      const queue = requireReach(deps).queue;
      // Named in the job, so that requests for one session coalesce: the first compacts it, the rest find it superseded.
      return reach(() => enqueueCompaction(queue, { conversationId, requestedBy, ...(sessionId !== null ? { sessionId } : {}) }));
    },
    async suspendRestartLoops(threshold) {
      const suspended = await suspendRestartLoops(deps.db, threshold);
      for (const s of suspended) await announce({ kind: 'suspended', conversationId: s.conversationId, reason: s.reason, sessionId: s.sessionId, sessionEnd: s.sessionEnd });
      return suspended;
    },
  };
}

/**
 * Runs a change in one transaction. Through the operator's door it is fenced
 * like a commit: the running turns are locked first (the order a commit
 * locks rows in, so neither waits for the other in a cycle), and superseded
 * only if the change happened; the audit row is written in the same
 * transaction. A chat command holds the lease, so it needs neither.
 */
async function changeFenced<T>(
  deps: ActionDeps,
  conversationId: number,
  door: Door<T>,
  change: (tx: DbExecutor) => Promise<T>,
  happened: (outcome: T) => boolean,
): Promise<{ outcome: T; superseded: number[] }> {
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

/** A chat command's change, applied once per event (Door): a command without an event (none today) is applied as it is. */
async function changeOnce<T>(deps: ActionDeps, door: { kind: 'chat'; inboundEventId?: number }, change: (tx: DbExecutor) => Promise<T>): Promise<T | AlreadyApplied> {
  const { inboundEventId } = door;
  if (inboundEventId === undefined) return change(deps.db);
  return deps.db.transaction(async (tx) => ((await markCommandApplied(tx, inboundEventId)) ? change(tx) : { kind: 'already_applied' as const }));
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
