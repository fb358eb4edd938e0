import { splitMessage } from './split-message.ts';

/**
 * Streaming replies (STREAMING, STREAM_AFTER_MS; docs/turns.md "Streaming
 * replies"): a slow answer is posted early and grows in place by edits. These
 * are the decisions, without I/O: when to post or edit, what text is shown,
 * and how a stopped stream is finished.
 */

export type StreamingSetting = 'on' | 'off';
export const streamingSettings: readonly StreamingSetting[] = ['on', 'off'];

/** The conversation's own setting wins; null: STREAMING. */
export function resolveStreaming(conversationSetting: string | null | undefined, globalSetting: StreamingSetting): boolean {
  const setting = conversationSetting === 'on' || conversationSetting === 'off' ? conversationSetting : globalSetting;
  return setting === 'on';
}

/**
 * At most one edit a second per message: Telegram allows about one message a
 * second per chat, Slack's chat.update is Tier 3 (50+ a minute), Discord's
 * edit bucket is 5 per 5 s per channel. One a second stays inside all three.
 */
export const streamEditIntervalMs = 1000;

/**
 * The first post waits until the text has been there this long, so an answer
 * that arrives in one burst after a slow start (a delayed model, a tool) and
 * ends at once is one plain message, not a post and an edit.
 */
export const streamSettleMs = 300;

/** Shown after the text while it still grows, so a message in progress never looks finished. */
export const streamCursor = ' …';

/** Ends the text of a stream its turn stopped (/stop, an interrupt, the time limit): never left looking complete. */
export const streamStoppedMarker = '\n\n[stopped]';

export interface StreamClock {
  now: number;
  /** When the turn began to run. */
  startedAt: number;
  /** STREAM_AFTER_MS. */
  afterMs: number;
  /** When the answer's text first arrived (undefined: none yet). */
  firstTextAt: number | undefined;
  /** When the last post or edit was sent (undefined: nothing posted yet). */
  lastSentAt: number | undefined;
  /** A 429's Retry-After: nothing is sent before this. */
  blockedUntil: number;
}

export type StreamStep =
  /** Nothing to send now; look again in `ms` (undefined: only when new text arrives). */
  | { kind: 'wait'; ms: number | undefined }
  | { kind: 'post'; text: string }
  | { kind: 'edit'; text: string };

/**
 * What to send now, given the answer's text so far (`text`), what the user
 * sees (`shown`, undefined before the first post) and the platform's limit.
 * The message carries the first part of the answer as the final reply will
 * split it; what goes past the limit is posted as new messages at the end.
 */
export function planStreamStep(clock: StreamClock, text: string, shown: string | undefined, limit: number): StreamStep {
  const preview = streamPreviewText(text, limit);
  if (preview === '' || clock.firstTextAt === undefined) return { kind: 'wait', ms: undefined };
  const notBefore = Math.max(
    clock.blockedUntil,
    shown === undefined ? Math.max(clock.startedAt + clock.afterMs, clock.firstTextAt + streamSettleMs) : (clock.lastSentAt ?? 0) + streamEditIntervalMs,
  );
  if (shown !== undefined && preview === shown) return { kind: 'wait', ms: undefined };
  if (clock.now < notBefore) return { kind: 'wait', ms: notBefore - clock.now };
  return shown === undefined ? { kind: 'post', text: preview } : { kind: 'edit', text: preview };
}

/**
 * The text a growing message shows: the first part of `text` as splitMessage
 * would cut it with room for the cursor, then the cursor. '' when there is
 * nothing but blanks yet.
 */
export function streamPreviewText(text: string, limit: number): string {
  if (text.trim() === '') return '';
  // The first part depends only on the first limit + 1 characters: a long answer is not split whole once a second.
  const trimmed = text.trimEnd();
  const [first] = splitMessage(trimmed.length > limit + 1 ? trimmed.slice(0, limit + 1) : trimmed, limit - streamCursor.length);
  return first === undefined ? '' : first + streamCursor;
}

/**
 * The final text of a stream its turn stopped: what the user saw, without
 * the cursor, and the marker, within the platform's limit. With nothing
 * known of what was shown (a message left by a crashed worker), the marker alone.
 */
export function stoppedStreamText(shown: string | undefined, limit: number): string {
  const marker = streamStoppedMarker.trim();
  const text = (shown ?? '').endsWith(streamCursor) ? (shown ?? '').slice(0, -streamCursor.length) : (shown ?? '');
  if (text.trim() === '') return marker;
  const room = limit - streamStoppedMarker.length;
  const body = text.length > room ? `${text.slice(0, Math.max(0, room - 1))}…` : text;
  return `${body}${streamStoppedMarker}`;
}

/** How long to hold edits after a 429: what the platform asked, at least one edit interval. */
export function streamBlockedUntil(now: number, retryAfterMs: number | undefined): number {
  return now + Math.max(retryAfterMs ?? streamEditIntervalMs, streamEditIntervalMs);
}
