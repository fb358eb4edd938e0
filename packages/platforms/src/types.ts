import type { ConversationAddress, Platform } from '@switchboard/core';

/** What every adapter turns a platform's inbound event into. */
export interface InboundMessage {
  platform: Platform;
  /** Platform event id used for dedupe (Telegram update_id, Slack event_id, Discord message id). */
  eventId: string;
  address: ConversationAddress;
  userId: string;
  /** Exactly what the user wrote. */
  text: string;
  /** Discord guild member roles, for role-based allowlists. */
  roles?: string[];
  /** Where replies go; opaque to everything but the same platform's sender. */
  replyTarget: Record<string, unknown>;
}

export type ParseResult = { kind: 'message'; message: InboundMessage } | { kind: 'ignored'; reason: string };

export interface SentMessage {
  platformMessageId: string;
}

/** The outbound half every adapter offers. */
export interface PlatformSender {
  readonly platform: Platform;
  /** Largest text one message may carry on this platform. */
  readonly messageLimit: number;
  /** How often a typing indicator must be re-sent to stay visible (Telegram ~5 s, Discord 10 s); 0 = the platform has none (Slack). */
  readonly typingIntervalMs: number;
  /** `partIndex`: which part of a split reply this is (0 = first); senders that reply to or answer the user's message do so on part 0 only. */
  sendText(target: Record<string, unknown>, text: string, options?: { idempotencyKey?: string; partIndex?: number }): Promise<SentMessage>;
  sendTyping(target: Record<string, unknown>): Promise<void>;
}
