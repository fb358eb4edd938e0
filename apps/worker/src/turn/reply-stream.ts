import { planStreamStep, streamBlockedUntil, type StreamStep } from '@switchboard/core';
import { claimStreamStep, openReplyStream, recordStreamMessage, releaseStreamStep, type StreamClaim, type StreamStepInput } from '@switchboard/db';
import { PlatformError, type PlatformSender } from '@switchboard/platforms';
import { outboxIdempotencyKey } from '../delivery/deliver-outbox.ts';
import { persistWithRetry } from '../delivery/persist-with-retry.ts';
import type { BeginTurnResult } from '@switchboard/db';
import type { WorkerContext } from '../worker-context.ts';

/** What a reply stream uses of the worker. */
export type StreamDeps = Pick<WorkerContext, 'config' | 'db' | 'heartbeat' | 'log' | 'metrics' | 'senders'>;

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
export function startReplyStream(ctx: StreamDeps, options: ReplyStreamOptions): ReplyStream {
  const log = ctx.log.child({ conversationId: options.conversationId });
  const startedAt = Date.now();
  const state: StreamState = { blockedUntil: 0, stopped: false };
  let text = '';
  let firstTextAt: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;

  const tick = (): void => {
    if (state.stopped || inFlight) return;
    clearTimeout(timer);
    timer = undefined;
    const { lastSentAt, blockedUntil, shown } = state;
    const step = planStreamStep({ now: Date.now(), startedAt, afterMs: ctx.config.STREAM_AFTER_MS, firstTextAt, lastSentAt, blockedUntil }, text, shown, options.sender.messageLimit);
    if (step.kind === 'wait') {
      if (step.ms !== undefined) timer = setTimeout(tick, step.ms);
      return;
    }
    inFlight = runStep({ ctx, options, log, state }, step).finally(() => {
      inFlight = undefined;
      tick();
    });
  };

  return {
    onText(next: string): void {
      text = next;
      if (firstTextAt === undefined && next.trim() !== '') firstTextAt = Date.now();
      // A look is already due (a timer) or follows the send in flight: text that arrives meanwhile waits for it.
      if (timer === undefined) tick();
    },
    async finish(): Promise<StreamResult> {
      state.stopped = true;
      clearTimeout(timer);
      while (inFlight) await inFlight;
      return { open: state.row !== undefined, shown: state.shown };
    },
  };
}

/** What one stream remembers between steps. */
interface StreamState {
  row?: ClaimedStream;
  shown?: string;
  lastSentAt?: number;
  blockedUntil: number;
  stopped: boolean;
}

interface StepScope {
  ctx: StreamDeps;
  options: ReplyStreamOptions;
  log: WorkerContext['log'];
  state: StreamState;
}

type PostOrEdit = Exclude<StreamStep, { kind: 'wait' }>;

/** One post or edit, claimed first and released after (docs/turns.md "The stream fence"). Never throws. */
async function runStep(scope: StepScope, step: PostOrEdit): Promise<void> {
  const { ctx, options, log, state } = scope;
  const claimedAt = Date.now();
  let claim: StreamClaim;
  try {
    claim = await claimNextStep(ctx, options, state.row);
  } catch (error) {
    state.stopped = true;
    log.warn({ err: error, step: step.kind }, 'streaming stopped for this turn');
    return;
  }
  if (claim.kind === 'busy') {
    // Another holding's post or edit of this message is in flight: look again once it has ended.
    state.blockedUntil = Date.now() + busyRetryMs;
    return;
  }
  if (claim.kind === 'stale') {
    // Taken over, committed, or this turn was superseded: a stale holder never posts or edits again.
    state.stopped = true;
    return;
  }
  state.row = claim;
  try {
    // A process frozen between its claim and the call (SIGSTOP, a long GC) may have been declared dead meanwhile,
    // its claim void and the message edited by another holding: a late claim is not used.
    if (Date.now() - claimedAt > ctx.config.WORKER_DEAD_AFTER_MS / 2 || !ctx.heartbeat.mayAct()) {
      log.warn({ step: step.kind, waitedMs: Date.now() - claimedAt }, 'stream step claimed too late to be safe; streaming stopped for this turn');
      state.stopped = true;
      return;
    }
    await postOrEdit(scope, step, claim);
  } finally {
    const { outboxId } = claim;
    await persistWithRetry(() => releaseStreamStep(ctx.db, outboxId, options.claimId), log, `stream ${outboxId} step released`);
  }
}

/** The platform call of a claimed step. A 429 holds the stream back; any other failure stops the growing, never the turn. */
async function postOrEdit(scope: StepScope, step: PostOrEdit, claim: ClaimedStream): Promise<void> {
  const { ctx, options, log, state } = scope;
  const { sender, target } = options;
  try {
    if (claim.platformMessageId !== null) await sender.editText(target, claim.platformMessageId, step.text, { partIndex: 0 });
    else {
      // The row's own key: a post repeated after an unclear failure is the same Discord message (enforce_nonce).
      const sent = await sender.sendText(target, step.text, { idempotencyKey: outboxIdempotencyKey({ id: claim.outboxId }), partIndex: 0 });
      claim.platformMessageId = sent.platformMessageId;
      const { outboxId } = claim;
      // Recorded like a delivered reply: a Postgres blip here must not make the final delivery post the reply again.
      await persistWithRetry(() => recordStreamMessage(ctx.db, outboxId, sent.platformMessageId), log, `stream ${outboxId} posted`);
    }
    state.shown = step.text;
    state.lastSentAt = Date.now();
  } catch (error) {
    if (error instanceof PlatformError && error.code === 'RATE_LIMITED') {
      ctx.metrics.countRateLimited(sender.platform);
      state.blockedUntil = streamBlockedUntil(Date.now(), error.retryAfterMs);
      log.info({ waitMs: state.blockedUntil - Date.now() }, 'stream edit rate limited; holding edits');
      return;
    }
    // The reply still goes out whole through the outbox; only the growing stops.
    state.stopped = true;
    log.warn({ err: error, step: step.kind }, 'streaming stopped for this turn');
  }
}

type ClaimedStream = Extract<StreamClaim, { kind: 'claimed' }>;

/** A look again at a message another holding is editing this instant. */
const busyRetryMs = 500;

/** The first step opens (or takes over) the growing message; every later one claims it again, fenced. */
async function claimNextStep(ctx: StreamDeps, options: ReplyStreamOptions, row: ClaimedStream | undefined): Promise<StreamClaim> {
  const input = await stepInput(ctx, options);
  if (!input) return { kind: 'stale' };
  if (row) return claimStreamStep(ctx.db, { ...input, outboxId: row.outboxId });
  return openReplyStream(ctx.db, { ...input, platform: options.sender.platform, target: options.target });
}

async function stepInput(ctx: StreamDeps, options: ReplyStreamOptions): Promise<StreamStepInput | undefined> {
  const begun = await options.begin;
  if (begun.kind !== 'begun') return undefined;
  return { conversationId: options.conversationId, turnId: begun.turnId, claimId: options.claimId, deadAfterMs: ctx.config.WORKER_DEAD_AFTER_MS };
}

/** The sender, if this conversation's replies stream: STREAMING or its own setting, and a platform that can edit. */
export function streamingSender(ctx: Pick<WorkerContext, 'senders'>, platform: string, enabled: boolean): ReplyStreamOptions['sender'] | undefined {
  const sender = ctx.senders.get(platform);
  if (!enabled || !sender?.editText) return undefined;
  return sender as ReplyStreamOptions['sender'];
}
