import type { ConversationAddress, InboundAttachment, Platform } from '@switchboard/core';

/** What every adapter turns a platform's inbound event into. */
export interface InboundMessage {
  platform: Platform;
  /** Platform event id used for dedupe (Telegram update_id, Slack event_id, Discord message id). */
  eventId: string;
  address: ConversationAddress;
  userId: string;
  /** Exactly what the user wrote (a file's caption; '' for a file without one). */
  text: string;
  /** Files the message carries, as references the worker fetches (docs/media.md); absent: none. */
  attachments?: InboundAttachment[];
  /** Discord guild member roles, for role-based allowlists. */
  roles?: string[];
  /** Where replies go; opaque to everything but the same platform's sender. */
  replyTarget: Record<string, unknown>;
  /**
   * Set when the message is a button press that stands for a typed command
   * (a `/schedules` list's Cancel button, docs/schedules.md "In chat"): how to
   * answer the press, as a ButtonPress's `answer`. Stored like any message.
   */
  pressAnswer?: Record<string, unknown>;
}

/**
 * A press of one of the bot's buttons (an approval question's Approve / Deny):
 * not input for a turn, decided where it arrives (docs/codex.md, "Approvals in chat").
 */
export interface ButtonPress {
  platform: Platform;
  /** Same account id as the platform's messages (Telegram bot id, Slack team id, Discord application id). */
  accountId: string;
  userId: string;
  /** What the button carries (callback_data, the action's value, custom_id). */
  payload: string;
  /** How to answer the press: Telegram `{callbackQueryId}`, Slack `{responseUrl}`; Discord answers in the HTTP response. */
  answer: Record<string, unknown>;
}

export type ParseResult = { kind: 'message'; message: InboundMessage } | { kind: 'button'; press: ButtonPress } | { kind: 'ignored'; reason: string };

/** A button under a message; `payload` comes back in the press. */
export interface ChoiceButton {
  label: string;
  payload: string;
  style?: 'primary' | 'danger';
}

export interface SentMessage {
  platformMessageId: string;
}

/** The outbound half every adapter offers. */
export interface PlatformSender {
  readonly platform: Platform;
  /** Largest text one message may carry on this platform. */
  readonly messageLimit: number;
  /**
   * Whether a part of at most `messageLimit` Markdown characters still fits in
   * one message once this platform renders it; absent: the text is sent as
   * written. The worker splits with it (core `splitMessage`).
   */
  fitsOneMessage?(text: string): boolean;
  /** How often a typing indicator must be re-sent to stay visible (Telegram ~5 s, Discord 10 s); 0 = the platform has none (Slack). */
  readonly typingIntervalMs: number;
  /** `partIndex`: which part of a split reply this is (0 = first); senders that reply to or answer the user's message do so on part 0 only. */
  sendText(target: Record<string, unknown>, text: string, options?: { idempotencyKey?: string; partIndex?: number }): Promise<SentMessage>;
  sendTyping(target: Record<string, unknown>): Promise<void>;
  /**
   * Sends `text` with buttons under it. Without `options` (an approval
   * question) as a message of its own: it never answers an interaction or
   * replies to the user's message. With them (a reply part from the outbox,
   * such as a `/schedules` list with its Cancel buttons) as `sendText` sends
   * that part, the buttons added.
   */
  sendWithButtons?(target: Record<string, unknown>, text: string, buttons: readonly ChoiceButton[], options?: { idempotencyKey?: string; partIndex?: number }): Promise<SentMessage>;
  /**
   * Changes the bot's reaction on the user's message the target names (STATUS_REACTIONS):
   * `remove` the previous emoji, `add` the next (null: none). A target without the
   * user's message id is skipped (resolves). Slack takes emoji names, the others emoji.
   */
  setReaction?(target: Record<string, unknown>, change: { remove: string | null; add: string | null }): Promise<void>;
  /**
   * Sets the text of a reply message the bot sent (a streamed reply growing
   * in place), rendered as `sendText` renders; `partIndex` as given to the
   * `sendText` that made it. Setting the text it already has succeeds.
   */
  editText?(target: Record<string, unknown>, platformMessageId: string, text: string, options?: { partIndex?: number }): Promise<void>;
  /** Replaces the text of a message the bot sent and removes its buttons (the question once answered). */
  replaceText?(target: Record<string, unknown>, platformMessageId: string, text: string): Promise<void>;
}
