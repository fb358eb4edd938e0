import { platforms, reactionOfTurn, waitsWhileBusy, type SettledTurnStatus } from '@switchboard/core';
import { loadPendingInbound, type InboundEventRow } from '@switchboard/db';
import type { ActiveTurn } from './active-turn.ts';
import { waitingInput } from '../conversation/plan-work.ts';
import type { WorkerContext } from '../worker-context.ts';

/** The reactions of one turn's input (STATUS_REACTIONS): none of it is ever awaited by the turn. */
export interface TurnReactions {
  /** The turn took these messages (its input, or steered input): 👀 on each once the turn has run STATUS_REACTION_AFTER_MS, replacing a ⏳. */
  take(events: readonly InboundEventRow[]): void;
  /** The turn's own work ended (answered, failed, stopped, or not to be committed): no 👀 after this. */
  end(): void;
  /** The turn committed: done, failed, or none (stopped) on every message it took that shows a reaction. */
  settle(status: SettledTurnStatus): void;
}

const noReactions: TurnReactions = { take() {}, end() {}, settle() {} };

/**
 * Starts the reactions of one turn. 👀 waits STATUS_REACTION_AFTER_MS (1 s
 * by default): an answer ready sooner leaves no reaction at all, since the
 * reply itself says the message was seen, and skipping the two calls (👀,
 * then ✅) is a tenth of an instant turn's worker CPU and two platform calls
 * out of three (issue 31, docs/benchmarks.md "Where the time went"). A
 * message that showed ⏳ while it waited still ends with ✅ or ❌. Each
 * change is best-effort: a refusal, a rate limit or a timeout is logged and
 * the next change still goes out.
 */
export function startTurnReactions(ctx: Pick<WorkerContext, 'config' | 'reactions'>, platformName: string, conversationId: number): TurnReactions {
  const platform = platforms.find((known) => known === platformName);
  if (ctx.config.STATUS_REACTIONS !== 'on' || platform === undefined) return noReactions;
  const taken: InboundEventRow[] = [];
  const showTaken = (events: readonly InboundEventRow[]) => {
    for (const event of events) ctx.reactions.show(platform, conversationId, event, 'taken');
  };
  let seen = ctx.config.STATUS_REACTION_AFTER_MS === 0;
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  return {
    take(events) {
      taken.push(...events);
      if (seen) showTaken(events);
      else if (!ended && timer === undefined) {
        timer = setTimeout(() => {
          seen = true;
          showTaken(taken);
        }, ctx.config.STATUS_REACTION_AFTER_MS);
        timer.unref();
      }
    },
    end() {
      ended = true;
      clearTimeout(timer);
    },
    settle(status) {
      clearTimeout(timer);
      const next = reactionOfTurn(status);
      for (const event of taken) if (seen || ctx.reactions.statusOf(event.id) !== undefined) ctx.reactions.show(platform, conversationId, event, next);
    },
  };
}

/**
 * A new message reached the holder while `active` runs (an `input` signal).
 * In busy modes `queue` and `collect` it waits for a later turn: ⏳ on it
 * (and on any other message waiting behind the turn that shows nothing yet).
 * Done here, by the process that will take the message, so the ⏳ can never
 * land after that turn's 👀. Never awaited; a failed read is only logged.
 */
export function showWaitingInput(ctx: Pick<WorkerContext, 'config' | 'db' | 'reactions' | 'running' | 'log'>, active: ActiveTurn): void {
  if (ctx.config.STATUS_REACTIONS !== 'on') return;
  const { mode, takenUpTo, stopReason } = active.state;
  // Not yet taken: this very turn may still take the message (it is reading its input now).
  if (takenUpTo === undefined || stopReason !== undefined || !waitsWhileBusy(mode)) return;
  const conversationId = active.conversationId;
  loadPendingInbound(ctx.db, conversationId, ctx.config.MAX_QUEUED_INPUT).then(
    (pending) => {
      // The turn ended while reading: the next one takes the input now, and its 👀 must not be followed by a ⏳.
      if (!ctx.running.holds(active) || active.state.stopReason !== undefined) return;
      for (const event of waitingInput(pending, active.state.takenUpTo ?? takenUpTo)) {
        const platform = platforms.find((known) => known === event.platform);
        if (platform !== undefined && ctx.reactions.statusOf(event.id) === undefined) ctx.reactions.show(platform, conversationId, event, 'queued');
      }
    },
    (err: unknown) => ctx.log.warn({ err, conversationId }, 'could not read the waiting input to show it queued'),
  );
}
