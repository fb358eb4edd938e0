import { planReactionChange, type Platform, type ReactionStatus } from '@switchboard/core';
import type { Logger } from '@switchboard/logger';
import type { PlatformSender } from '@switchboard/platforms';

/** A reaction call that takes longer is given up: a slow or rate-limited platform never holds a turn or its delivery. */
export const reactionTimeoutMs = 5000;

/** Reactions this process remembers at most (queued ones another worker took are never settled here). */
const maxRemembered = 10_000;

/**
 * What this process shows on users' messages, per inbound event, and the
 * changes in flight per conversation. One board for the whole process, so
 * the turn that takes a message knows the ⏳ it showed while the message
 * waited (Slack and Discord remove the previous emoji by name), and the
 * changes of one conversation go out one after another, in the order they
 * were decided.
 */
export interface ReactionBoard {
  /** Moves the event's reaction to `next` (null: none), in the background; never throws, never awaited. */
  show(platform: Platform, conversationId: number, event: { id: number; replyTarget: Record<string, unknown> }, next: ReactionStatus | null): void;
  /** What the event shows from this process: undefined when it never showed anything here (or was settled). */
  statusOf(eventId: number): ReactionStatus | undefined;
}

export function createReactionBoard(senders: Map<string, PlatformSender>, log: Logger): ReactionBoard {
  const shown = new Map<number, ReactionStatus>();
  const chains = new Map<number, Promise<void>>();
  return {
    show(platform, conversationId, event, next) {
      const sender = senders.get(platform);
      if (!sender?.setReaction) return;
      const change = planReactionChange(platform, shown.get(event.id) ?? null, next);
      // Only waiting and taken messages change again; a settled one is forgotten.
      shown.delete(event.id);
      if (next === 'queued' || next === 'taken') shown.set(event.id, next);
      if (shown.size > maxRemembered) shown.delete(shown.keys().next().value as number);
      if (change === null) return;
      const chain = (chains.get(conversationId) ?? Promise.resolve()).then(() => applyReaction(sender, event.replyTarget, change, log.child({ conversationId })));
      chains.set(conversationId, chain);
      void chain.then(() => {
        if (chains.get(conversationId) === chain) chains.delete(conversationId);
      });
    },
    statusOf: (eventId) => shown.get(eventId),
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
