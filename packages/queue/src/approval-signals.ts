import { listenTo, publishTo } from './channels.ts';
import type { RedisClient } from './redis-connection.ts';
import { z } from 'zod';

/**
 * Nudges to the worker waiting on a question (docs/codex.md, "Approvals in chat"):
 * `decided` (an answer was stored) or `notice` (a reply to an answer was
 * queued for the conversation; the waiting worker holds the conversation and
 * delivers it at once). A channel of its own beside the conversation signals:
 * these never stop or interrupt a turn, and they go out whether or not the
 * lease is held. Fire and forget: the waiting worker also re-reads the
 * question every few seconds, so a lost nudge only delays it.
 */
export const approvalSignalSchema = z.object({
  kind: z.enum(['decided', 'notice']),
  conversationId: z.number().int().positive(),
  /** The question decided (0 for a notice). */
  approvalId: z.number().int().nonnegative(),
});
export type ApprovalSignal = z.infer<typeof approvalSignalSchema>;

export const approvalSignalChannel = (prefix: string) => `${prefix}:approvals`;

export async function publishApprovalSignal(redis: RedisClient, prefix: string, signal: ApprovalSignal): Promise<void> {
  await publishTo(redis, approvalSignalChannel(prefix), JSON.stringify(signal));
}

/** Subscribes `subscriber` (a connection only for subscriptions; it may carry the conversation signals too). */
export async function subscribeApprovalSignals(subscriber: RedisClient, prefix: string, onSignal: (signal: ApprovalSignal) => void, onBadMessage?: (raw: string) => void): Promise<void> {
  await listenTo(subscriber, approvalSignalChannel(prefix), (raw) => {
    let parsed: ApprovalSignal;
    try {
      parsed = approvalSignalSchema.parse(JSON.parse(raw));
    } catch {
      onBadMessage?.(raw);
      return;
    }
    onSignal(parsed);
  });
}
