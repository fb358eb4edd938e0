import type { RedisClient } from '@switchboard/queue';
import type { Logger } from '@switchboard/logger';
import { subscribeApprovalSignals, type ApprovalSignal } from '@switchboard/queue';

/**
 * The questions this process is waiting on, by conversation: the approval
 * channel's signals (a decision, a reply queued for the chat) reach the
 * waiting ask at once. Without them the ask still re-reads its question
 * every few seconds.
 */
export interface ApprovalWaiters {
  /** Calls `onSignal` for every approval signal about the conversation until the returned function is called. */
  listen(conversationId: number, onSignal: (signal: ApprovalSignal) => void): () => void;
  dispatch(signal: ApprovalSignal): void;
}

export function createApprovalWaiters(): ApprovalWaiters {
  const listeners = new Map<number, Set<(signal: ApprovalSignal) => void>>();
  return {
    listen(conversationId, onSignal) {
      const set = listeners.get(conversationId) ?? new Set();
      set.add(onSignal);
      listeners.set(conversationId, set);
      return () => {
        set.delete(onSignal);
        if (set.size === 0) listeners.delete(conversationId);
      };
    },
    dispatch(signal) {
      for (const listener of listeners.get(signal.conversationId) ?? []) listener(signal);
    },
  };
}

/** Feeds the approval channel into `waiters`, on a connection used only for subscriptions (the worker's signal subscriber). */
export async function subscribeApprovalWaiters(subscriber: RedisClient, prefix: string, waiters: ApprovalWaiters, log: Logger): Promise<void> {
  await subscribeApprovalSignals(subscriber, prefix, (signal) => waiters.dispatch(signal), () => log.warn('ignored a malformed approval signal'));
}
