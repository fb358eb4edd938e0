import { planStreamStep, streamBlockedUntil, type StreamStep } from '@switchboard/core';
import { openReplyStream, recordStreamMessage, type OpenReplyStream } from '@switchboard/db';
import { PlatformError, type PlatformSender } from '@switchboard/platforms';
import { outboxIdempotencyKey } from './deliver-outbox.ts';
import { persistWithRetry } from './persist-with-retry.ts';
import type { BeginTurnResult } from '@switchboard/db';
import type { WorkerContext } from './worker-context.ts';

/** What a turn's stream left for its commit: whether a growing message exists, and the text the user sees in it. */
export interface StreamResult {
  open: boolean;
  shown: string | undefined;
}

export interface ReplyStream {
  /** The runtime's text so far (RunTurnRequest.onText). Never throws. */
  onText(text: string): void;
  /** Stops growing the message and waits for a post or an edit in flight, so the final edit comes after it. */
  finish(): Promise<StreamResult>;
}

export interface ReplyStreamOptions {
  conversationId: number;
  sender: PlatformSender & { editText: NonNullable<PlatformSender['editText']> };
  target: Record<string, unknown>;
  /** The turn's row: only a turn that began streams. */
  begin: Promise<BeginTurnResult>;
  claimId: string;
}

/**
 * Shows a slow answer as it grows (STREAMING; docs/turns.md "Streaming
 * replies"): after STREAM_AFTER_MS the text so far is posted, then edited at
 * most once a second (core's planStreamStep), holding back after a 429 for
 * as long as the platform asks. The outbox row is written before the post
 * and the message id right after it, so a retry after a crash edits this
 * message instead of posting the reply again. Everything here is
 * best-effort: a failed post or edit stops the growing, never the turn, and
 * the committed reply still reaches the user through the outbox.
 */
export function startReplyStream(ctx: WorkerContext, options: ReplyStreamOptions): ReplyStream {
  const { sender, target } = options;
  const log = ctx.log.child({ conversationId: options.conversationId });
  const startedAt = Date.now();
  let text = '';
  let firstTextAt: number | undefined;
  let shown: string | undefined;
  let lastSentAt: number | undefined;
  let blockedUntil = 0;
  let row: OpenReplyStream | undefined;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let stopped = false;

  const tick = (): void => {
    if (stopped || inFlight) return;
    clearTimeout(timer);
    timer = undefined;
    const now = Date.now();
    const step = planStreamStep({ now, startedAt, afterMs: ctx.config.STREAM_AFTER_MS, firstTextAt, lastSentAt, blockedUntil }, text, shown, sender.messageLimit);
    if (step.kind === 'wait') {
      if (step.ms !== undefined) timer = setTimeout(tick, step.ms);
      return;
    }
    inFlight = send(step).finally(() => {
      inFlight = undefined;
      tick();
    });
  };

  const send = async (step: Exclude<StreamStep, { kind: 'wait' }>): Promise<void> => {
    try {
      row ??= await openRow(ctx, options);
      if (!row) {
        stopped = true;
        return;
      }
      if (row.platformMessageId !== null) await sender.editText(target, row.platformMessageId, step.text, { partIndex: 0 });
      else {
        // The row's own key: a post repeated after an unclear failure is the same Discord message (enforce_nonce).
        const sent = await sender.sendText(target, step.text, { idempotencyKey: outboxIdempotencyKey({ id: row.outboxId }), partIndex: 0 });
        row.platformMessageId = sent.platformMessageId;
        const { outboxId } = row;
        // Recorded like a delivered reply: a Postgres blip here must not make the final delivery post the reply again.
        await persistWithRetry(() => recordStreamMessage(ctx.db, outboxId, sent.platformMessageId), log, `stream ${outboxId} posted`);
      }
      shown = step.text;
      lastSentAt = Date.now();
    } catch (error) {
      if (error instanceof PlatformError && error.code === 'RATE_LIMITED') {
        ctx.metrics.countRateLimited(sender.platform);
        blockedUntil = streamBlockedUntil(Date.now(), error.retryAfterMs);
        log.info({ waitMs: blockedUntil - Date.now() }, 'stream edit rate limited; holding edits');
        return;
      }
      // The reply still goes out whole through the outbox; only the growing stops.
      stopped = true;
      log.warn({ err: error, step: step.kind }, 'streaming stopped for this turn');
    }
  };

  return {
    onText(next: string): void {
      text = next;
      if (firstTextAt === undefined && next.trim() !== '') firstTextAt = Date.now();
      // A look is already due (a timer) or follows the send in flight: text that arrives meanwhile waits for it.
      if (timer === undefined) tick();
    },
    async finish(): Promise<StreamResult> {
      stopped = true;
      clearTimeout(timer);
      while (inFlight) await inFlight;
      return { open: row !== undefined, shown };
    },
  };
}

async function openRow(ctx: WorkerContext, options: ReplyStreamOptions): Promise<OpenReplyStream | undefined> {
  const begun = await options.begin;
  if (begun.kind !== 'begun') return undefined;
  return openReplyStream(ctx.db, {
    conversationId: options.conversationId,
    turnId: begun.turnId,
    platform: options.sender.platform,
    target: options.target,
    claimFor: options.claimId,
  });
}

/** The sender, if this conversation's replies stream: STREAMING or its own setting, and a platform that can edit. */
export function streamingSender(ctx: WorkerContext, platform: string, enabled: boolean): ReplyStreamOptions['sender'] | undefined {
  const sender = ctx.senders.get(platform);
  if (!enabled || !sender?.editText) return undefined;
  return sender as ReplyStreamOptions['sender'];
}
