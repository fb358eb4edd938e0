import { AgentError, estimateMessageTokens, renderTranscriptForSummary } from '@switchboard/agent';
import {
  automaticCompressionGate,
  compressionBackoffMaxDoublings,
  findToolTail,
  normaliseText,
  hasEnoughToSummarise,
  judgeCompression,
  planCompression,
  type CompressionPlan,
  type CompressionPolicy,
} from '@switchboard/core';
import {
  commitCompression,
  ensureCurrentSession,
  loadConversation,
  loadMessagesForCompression,
  loadSession,
  recordCompressionFailure,
  tryLockSessionForCompression,
  type CompressionSourceMessage,
  type SessionLock,
  type Database,
  type SessionRow,
} from '@switchboard/db';
import { createConcurrencyLimit, type ConcurrencyLimit } from './concurrency-limit.ts';
import type { WorkerContext } from '../worker-context.ts';

/**
 * `superseded`: the request named a session that is no longer current (it
 * was compressed or reset since). `nothing_to_gain`: a person asked, but
 * besides the earlier summary too little would be summarised for the session
 * to shrink. Both are no-ops: no model call, nothing written.
 */
export type CompressionOutcome = 'compressed' | 'not_needed' | 'nothing_to_gain' | 'superseded' | 'locked' | 'rotated' | 'stale' | 'failed' | 'blocked' | 'backoff' | 'interrupted';

export interface CompressionOptions {
  /** A person asked (/compact, the operator): ignore the backoff and the automatic-compression stop. */
  force: boolean;
  signal?: AbortSignal;
  /**
   * The session the request was meant for. If another session is current by
   * the time it runs, the request is `superseded` and does nothing: eight
   * operator requests for one session give one summary, not a summary of a
   * summary seven times over.
   */
  expectedSessionId?: number;
}

export interface CompressionResult {
  outcome: CompressionOutcome;
  oldSessionId?: number;
  childSessionId?: number;
  summarisedMessages?: number;
}

/** What one compression spent waiting on the model, and what it did: filled in as it goes, read once it returns. */
interface CompressionTrace {
  summariserMs: number;
  /** Time spent waiting for a compression slot (queueing behind other compressions, not work). */
  slotWaitMs: number;
  summarised: number;
  kept: number;
  shrunk: boolean;
}

/** One compression under the session's lock: the conversation and session it compresses, as asked, and the trace it fills in. */
interface CompressionRun {
  conversationId: number;
  session: SessionRow;
  options: CompressionOptions;
  trace: CompressionTrace;
}

/**
 * The one compression path (docs/compression.md): preflight, /compact and the admin
 * action all come here. `force` (a person asked) ignores the backoff and the
 * automatic-compression stop. An interrupt (`signal`) is checked before the
 * summary is requested; once requested, the summary is finished and
 * committed whatever happens, because the commit is safe and the work is
 * not thrown away. The caller re-reads the conversation afterwards: whatever
 * the outcome, the current session is the one to continue with.
 * `expectedSessionId` makes a request for one session a no-op once another
 * is current (`superseded`). At most COMPRESSION_CONCURRENCY compressions of
 * one process run at once; the others wait for a slot (an interrupt ends the
 * wait).
 *
 * Timed here, around the whole call (lock release included), because issue 4
 * asks for the gateway's own share of a compression: everything from start to
 * return except the summariser call, which is the model's time, and the wait
 * for a slot, which is other compressions' time.
 */
export async function compressConversation(ctx: WorkerContext, conversationId: number, options: CompressionOptions): Promise<CompressionResult> {
  const started = performance.now();
  const trace: CompressionTrace = { summariserMs: 0, slotWaitMs: 0, summarised: 0, kept: 0, shrunk: false };
  const result = await runCompression(ctx, conversationId, options, trace);
  if (result.outcome === 'compressed') {
    const gatewayMs = performance.now() - started - trace.summariserMs - trace.slotWaitMs;
    ctx.metrics.observeCompressionGateway(gatewayMs);
    ctx.log.info(
      {
        conversationId,
        oldSessionId: result.oldSessionId,
        childSessionId: result.childSessionId,
        summarised: trace.summarised,
        kept: trace.kept,
        shrunk: trace.shrunk,
        gatewayMs: Math.round(gatewayMs),
        summariserMs: Math.round(trace.summariserMs),
        slotWaitMs: Math.round(trace.slotWaitMs),
      },
      'session compressed',
    );
  }
  return result;
}

/**
 * Compression slots per worker pool. Keyed by the pool's handle (one per
 * pool), not the context: the limit exists to protect the pool
 * (docs/compression.md, "The pool").
 */
const compressionSlots = new WeakMap<Database, ConcurrencyLimit>();

function slotsFor(ctx: WorkerContext): ConcurrencyLimit {
  let slots = compressionSlots.get(ctx.db);
  if (!slots) {
    slots = createConcurrencyLimit(ctx.config.COMPRESSION_CONCURRENCY);
    compressionSlots.set(ctx.db, slots);
  }
  return slots;
}

/** compressConversation's steps (docs/compression.md), reporting the summariser's time and the sizes through `trace`. */
async function runCompression(ctx: WorkerContext, conversationId: number, options: CompressionOptions, trace: CompressionTrace): Promise<CompressionResult> {
  const conversation = await loadConversation(ctx.db, conversationId);
  if (!conversation) return { outcome: 'not_needed' };
  const sessionId = await ensureCurrentSession(ctx.db, conversation);
  if (options.expectedSessionId !== undefined && options.expectedSessionId !== sessionId) return { outcome: 'superseded', oldSessionId: sessionId };
  const session = await loadSession(ctx.db, sessionId);
  if (!session) return { outcome: 'rotated' };
  const gate = automaticCompressionGate({ blocked: session.compressBlocked, nextCompressAtMs: session.nextCompressAt?.getTime() ?? null }, Date.now(), options.force);
  if (gate !== 'run') return { outcome: gate, oldSessionId: sessionId };
  if (options.signal?.aborted) return { outcome: 'interrupted', oldSessionId: sessionId };

  // The slot comes before the lock's connection: at most COMPRESSION_CONCURRENCY
  // connections of the pool are ever held by compressions, so the queries
  // they (and every turn) still need always find a free one.
  const waited = performance.now();
  const releaseSlot = await slotsFor(ctx).acquire(options.signal);
  trace.slotWaitMs = performance.now() - waited;
  if (!releaseSlot) return { outcome: 'interrupted', oldSessionId: sessionId };
  try {
    return await compressLocked(ctx, { conversationId, session, options, trace });
  } finally {
    releaseSlot();
  }
}

/** Steps 1 and 3–5 under the session's advisory lock: plan, summarise, commit. */
async function compressLocked(ctx: WorkerContext, run: CompressionRun): Promise<CompressionResult> {
  const { conversationId, session, options } = run;
  const sessionId = session.id;
  let lock: SessionLock;
  try {
    lock = await tryLockSessionForCompression(ctx.db, sessionId);
  } catch (err) {
    // Fail open: the compare-and-set in the commit alone keeps the chain a line.
    ctx.log.warn({ err, conversationId, sessionId }, 'compression lock unavailable; relying on the commit compare-and-set');
    lock = { acquired: true, release: async () => undefined };
  }
  if (!lock.acquired) {
    ctx.metrics.countCompression('skipped_lock');
    return { outcome: 'locked', oldSessionId: sessionId };
  }
  try {
    // Read again under the lock: a compression that committed while this one
    // waited for its slot or the lock moved the pointer, and summarising the
    // old session again would only be thrown away at the commit.
    const current = await loadConversation(ctx.db, conversationId);
    if (current?.currentSessionId !== sessionId) {
      if (options.expectedSessionId !== undefined) return { outcome: 'superseded', oldSessionId: sessionId };
      ctx.metrics.countCompression('skipped_rotated');
      return { outcome: 'rotated', oldSessionId: sessionId };
    }
    const messages = await loadMessagesForCompression(ctx.db, sessionId);
    const keepBudget = Math.floor(ctx.config.MODEL_CONTEXT_TOKENS * ctx.config.COMPRESSION_KEEP_RATIO);
    const plan = planCompression(messages, keepBudget);
    if (!plan) return { outcome: 'not_needed', oldSessionId: sessionId };
    // A blocked session is the exception: its summary grew, and a person asking is the way to have it rewritten.
    if (options.force && !session.compressBlocked && !hasEnoughFreshTokens(plan, messages)) return { outcome: 'nothing_to_gain', oldSessionId: sessionId };
    // The last point before the summariser is asked (docs/compression.md "Interrupts"): an interrupt during the slot wait, the lock or the read ends it here.
    if (options.signal?.aborted) return { outcome: 'interrupted', oldSessionId: sessionId };
    return await summariseAndCommit(ctx, run, messages, plan);
  } finally {
    await lock.release();
  }
}

/** Core's hasEnoughToSummarise on the plan: an earlier summary among the messages to summarise is not fresh. */
function hasEnoughFreshTokens(plan: CompressionPlan<CompressionSourceMessage>, messages: readonly CompressionSourceMessage[]): boolean {
  const total = messages.reduce((sum, m) => sum + m.tokens, 0);
  const fresh = plan.summarise.reduce((sum, m) => sum + (m.kind === 'summary' ? 0 : m.tokens), 0);
  return hasEnoughToSummarise(fresh, total);
}

/** Step 3's summary and step 4's commit (the lock is held by the caller). */
async function summariseAndCommit(ctx: WorkerContext, run: CompressionRun, messages: CompressionSourceMessage[], plan: CompressionPlan<CompressionSourceMessage>): Promise<CompressionResult> {
  const { conversationId, session, trace } = run;
  const sessionId = session.id;
  const tail = findToolTail(messages);
  const unread = new Set<number>();
  if (tail) for (let i = tail.start; i < Math.min(tail.start + tail.count, plan.summarise.length); i++) unread.add(i);
  const transcript = renderTranscriptForSummary(plan.summarise, unread);
  const asked = performance.now();
  let summary: string;
  try {
    // Cleaned like model text (normaliseText): a summary with U+0000 or a lone surrogate made the commit throw, every time (issue 29, defect 4).
    summary = normaliseText(await ctx.summariser.summarise(transcript));
  } catch (error) {
    trace.summariserMs = performance.now() - asked;
    ctx.metrics.observeCompressionSummariser('failed', trace.summariserMs);
    return failCompression(ctx, { conversationId, sessionId, error });
  }
  trace.summariserMs = performance.now() - asked;
  ctx.metrics.observeCompressionSummariser('ok', trace.summariserMs);
  const summaryTokens = estimateMessageTokens(summary);
  const keptTokens = plan.keep.reduce((sum, m) => sum + m.tokens, 0);
  const { shrunk, compressFailures, blocked } = judgeCompression({ summaryTokens, keptTokens, sessionTokens: session.tokenEstimate, failuresBefore: session.compressFailures });
  let committed: Awaited<ReturnType<typeof commitCompression>>;
  try {
    committed = await commitCompression(ctx.db, {
      conversationId,
      oldSessionId: sessionId,
      summary,
      summaryTokens,
      keptMessageIds: plan.keep.map((m) => m.id),
      readUpToSeq: messages.at(-1)?.seq ?? 0,
      keptTokens,
      compressFailures,
      blocked,
    });
  } catch (error) {
    return failCompression(ctx, { conversationId, sessionId, error });
  }
  if (committed.kind === 'rotated') {
    ctx.metrics.countCompression('skipped_rotated');
    return { outcome: 'rotated', oldSessionId: sessionId };
  }
  if (committed.kind === 'stale') {
    // A turn committed to the session while the summary was written (this worker lost the lease, or the lock
    // failed open): the summary does not cover it, so it is thrown away; the next turn's preflight compresses again.
    ctx.metrics.countCompression('skipped_stale');
    ctx.log.warn({ conversationId, sessionId }, 'compression discarded: the session grew while it was summarised');
    return { outcome: 'stale', oldSessionId: sessionId };
  }
  const childSessionId = committed.childSessionId;
  ctx.metrics.countCompression('done');
  Object.assign(trace, { summarised: plan.summarise.length, kept: plan.keep.length, shrunk });
  await ctx.emit({ type: 'session.compressed', conversationId, sessionId, childSessionId });
  return { outcome: 'compressed', oldSessionId: sessionId, childSessionId, summarisedMessages: plan.summarise.length };
}

/**
 * Any failure of the summary or its commit backs off like a failing
 * summariser (COMPRESSION_BACKOFF_MS, at most COMPRESSION_MAX_ATTEMPTS in a
 * row): before, only an AgentError did, and anything else was thrown into the
 * turn, which re-ran the compression with a summariser call every few seconds
 * (issue 29, defect 4). If even recording the failure fails (Postgres down),
 * the compression still ends `failed`: the turn goes on without it.
 */
async function failCompression(ctx: WorkerContext, failure: { conversationId: number; sessionId: number; error: unknown }): Promise<CompressionResult> {
  const { conversationId, sessionId, error } = failure;
  const expected = error instanceof AgentError;
  if (!expected) ctx.metrics.countUnexpectedError('compression');
  const recorded = await recordCompressionFailure(ctx.db, sessionId, { ...compressionPolicy(ctx), maxDoublings: compressionBackoffMaxDoublings }).catch((err: unknown) => {
    ctx.log.warn({ err, conversationId, sessionId }, 'compression failure not recorded; no backoff this time');
    return undefined;
  });
  ctx.metrics.countCompression('failed');
  ctx.log.warn({ conversationId, sessionId, ...recorded, err: expected ? error.cause : error }, expected ? 'summariser failed; continuing without compression' : 'compression failed unexpectedly; continuing without compression');
  return { outcome: 'failed', oldSessionId: sessionId };
}

function compressionPolicy(ctx: WorkerContext): CompressionPolicy {
  return { backoffMs: ctx.config.COMPRESSION_BACKOFF_MS, maxAttempts: ctx.config.COMPRESSION_MAX_ATTEMPTS };
}
