import { planReactionChange, platforms, reactionOfTurn, type ReactionStatus, type SettledTurnStatus } from '@switchboard/core';
import type { InboundEventRow } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { PlatformSender } from '@switchboard/platforms';
import type { WorkerContext } from './worker-context.ts';

/** A reaction call that takes longer is given up: a slow or rate-limited platform never holds a turn or its delivery. */
export const reactionTimeoutMs = 5000;

/** The reactions of one turn's input (STATUS_REACTIONS): none of it is ever awaited by the turn. */
export interface TurnReactions {
  /** The turn took these messages (its input, or steered input): 👀 on each. */
  take(events: readonly InboundEventRow[]): void;
  /** The turn committed: done, failed, or none (stopped) on every message it took. */
  settle(status: SettledTurnStatus): void;
}

const noReactions: TurnReactions = { take() {}, settle() {} };

/**
 * Starts the reactions of one turn. The changes go out one after another in
 * the background (Slack and Discord remove the previous emoji by name, so
 * order matters); each is best-effort: a refusal, a rate limit or a timeout is
 * logged and the next change still goes out.
 */
export function startTurnReactions(ctx: Pick<WorkerContext, 'config' | 'senders' | 'log'>, platformName: string, conversationId: number): TurnReactions {
  const sender = ctx.senders.get(platformName);
  const platform = platforms.find((known) => known === platformName);
  if (ctx.config.STATUS_REACTIONS !== 'on' || !sender?.setReaction || platform === undefined) return noReactions;
  const log = ctx.log.child({ conversationId });
  const shown = new Map<number, { target: Record<string, unknown>; status: ReactionStatus | null }>();
  let chain: Promise<void> = Promise.resolve();
  const show = (eventId: number, target: Record<string, unknown>, next: ReactionStatus | null) => {
    const current = shown.get(eventId)?.status ?? null;
    shown.set(eventId, { target, status: next });
    const change = planReactionChange(platform, current, next);
    if (change === null) return;
    chain = chain.then(() => applyReaction(sender, target, change, log));
  };
  return {
    take(events) {
      for (const event of events) show(event.id, event.replyTarget, 'taken');
    },
    settle(status) {
      const next = reactionOfTurn(status);
      for (const [eventId, { target }] of shown) show(eventId, target, next);
    },
  };
}

/** One change with a time limit; never rejects. */
async function applyReaction(sender: PlatformSender, target: Record<string, unknown>, change: { remove: string | null; add: string | null }, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), reactionTimeoutMs);
  });
  try {
    const call = (sender.setReaction as NonNullable<PlatformSender['setReaction']>)(target, change);
    // The call may still settle after the timeout: its rejection is handled here too.
    call.catch(() => {});
    const result = await Promise.race([call.then(() => 'done' as const), timedOut]);
    if (result === 'timeout') log.warn({ change, timeoutMs: reactionTimeoutMs }, 'status reaction gave up: the platform did not answer in time');
  } catch (err) {
    // A platform that refuses a reaction (not allowed, rate limited, no permission) never fails the turn.
    log.warn({ err, change }, 'status reaction refused by the platform');
  } finally {
    clearTimeout(timer);
  }
}
