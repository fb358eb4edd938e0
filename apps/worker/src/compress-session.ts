import { AgentError, renderTranscriptForSummary } from '@switchboard/agent';
import { estimateMessageTokens, findToolTail, planCompression } from '@switchboard/core';
import {
  commitCompression,
  ensureCurrentSession,
  loadConversation,
  loadMessagesForCompression,
  loadSession,
  recordCompressionFailure,
  tryLockSessionForCompression,
  type SessionLock,
} from '@switchboard/db';
import type { WorkerContext } from './worker-context.ts';

export type CompressionOutcome = 'compressed' | 'not_needed' | 'locked' | 'rotated' | 'failed' | 'blocked' | 'backoff' | 'interrupted';

export interface CompressionResult {
  outcome: CompressionOutcome;
  oldSessionId?: number;
  childSessionId?: number;
  summarisedMessages?: number;
}

/** A compression must cut at least this share of the tokens to count as shrinking. */
const minimumShrink = 0.9;

/** What one compression spent waiting on the model, and what it did: filled in as it goes, read once it returns. */
interface CompressionTrace {
  summariserMs: number;
  summarised: number;
  kept: number;
  shrunk: boolean;
}

/**
 * The one compression path (DESIGN §8): preflight, /compact and the admin
 * action all come here. `force` (a person asked) ignores the backoff and the
 * automatic-compression stop. An interrupt (`signal`) is checked before the
 * summary is requested; once requested, the summary is finished and
 * committed whatever happens, because the commit is safe and the work is
 * not thrown away. The caller re-reads the conversation afterwards: whatever
 * the outcome, the current session is the one to continue with.
 *
 * Timed here, around the whole call (lock release included), because issue 4
 * asks for the gateway's own share of a compression: everything from start to
 * return except the summariser call, which is the model's time.
 */
export async function compressConversation(ctx: WorkerContext, conversationId: number, options: { force: boolean; signal?: AbortSignal }): Promise<CompressionResult> {
  const started = performance.now();
  const trace: CompressionTrace = { summariserMs: 0, summarised: 0, kept: 0, shrunk: false };
  const result = await runCompression(ctx, conversationId, options, trace);
  if (result.outcome === 'compressed') {
    const gatewayMs = performance.now() - started - trace.summariserMs;
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
      },
      'session compressed',
    );
  }
  return result;
}

/** compressConversation's steps (DESIGN §8 1–5), reporting the summariser's time and the sizes through `trace`. */
async function runCompression(ctx: WorkerContext, conversationId: number, options: { force: boolean; signal?: AbortSignal }, trace: CompressionTrace): Promise<CompressionResult> {
  const conversation = await loadConversation(ctx.db, conversationId);
  if (!conversation) return { outcome: 'not_needed' };
  const sessionId = await ensureCurrentSession(ctx.db, conversation);
  const session = await loadSession(ctx.db, sessionId);
  if (!session) return { outcome: 'rotated' };
  if (!options.force && session.compressBlocked) return { outcome: 'blocked', oldSessionId: sessionId };
  if (!options.force && session.nextCompressAt && session.nextCompressAt.getTime() > Date.now()) return { outcome: 'backoff', oldSessionId: sessionId };
  if (options.signal?.aborted) return { outcome: 'interrupted', oldSessionId: sessionId };

  let lock: SessionLock;
  try {
    lock = await tryLockSessionForCompression(ctx.sql, sessionId);
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
    const messages = await loadMessagesForCompression(ctx.sql, sessionId);
    const keepBudget = Math.floor(ctx.config.MODEL_CONTEXT_TOKENS * ctx.config.COMPRESSION_KEEP_RATIO);
    const plan = planCompression(messages, keepBudget);
    if (!plan) return { outcome: 'not_needed', oldSessionId: sessionId };

    const tail = findToolTail(messages);
    const unread = new Set<number>();
    if (tail) for (let i = messages.length - tail.count; i < plan.summarise.length; i++) unread.add(i);
    const transcript = renderTranscriptForSummary(plan.summarise, unread);
    const asked = performance.now();
    let summary: string;
    try {
      summary = await ctx.summariser.summarise(transcript);
    } catch (error) {
      trace.summariserMs = performance.now() - asked;
      ctx.metrics.observeCompressionSummariser('failed', trace.summariserMs);
      if (!(error instanceof AgentError)) throw error;
      const { failures, blocked } = await recordCompressionFailure(ctx.db, sessionId, ctx.config.COMPRESSION_BACKOFF_MS, ctx.config.COMPRESSION_MAX_ATTEMPTS);
      ctx.metrics.countCompression('failed');
      ctx.log.warn({ conversationId, sessionId, failures, blocked, err: error.cause }, 'summariser failed; continuing without compression');
      return { outcome: 'failed', oldSessionId: sessionId };
    }
    trace.summariserMs = performance.now() - asked;
    ctx.metrics.observeCompressionSummariser('ok', trace.summariserMs);
    const summaryTokens = estimateMessageTokens(summary);
    const keptTokens = plan.keep.reduce((sum, m) => sum + m.tokens, 0);
    const shrunk = summaryTokens + keptTokens < session.tokenEstimate * minimumShrink;
    const compressFailures = shrunk ? 0 : session.compressFailures + 1;
    const childSessionId = await commitCompression(ctx.db, {
      conversationId,
      oldSessionId: sessionId,
      summary,
      summaryTokens,
      keptMessageIds: plan.keep.map((m) => m.id),
      keptTokens,
      compressFailures,
      // Two compressions in a row that do not shrink: stop until a person asks (no loops).
      blocked: !shrunk && compressFailures >= 2,
    });
    if (childSessionId === null) {
      ctx.metrics.countCompression('skipped_rotated');
      return { outcome: 'rotated', oldSessionId: sessionId };
    }
    ctx.metrics.countCompression('done');
    Object.assign(trace, { summarised: plan.summarise.length, kept: plan.keep.length, shrunk });
    await ctx.emit({ type: 'session.compressed', conversationId, sessionId, childSessionId });
    return { outcome: 'compressed', oldSessionId: sessionId, childSessionId, summarisedMessages: plan.summarise.length };
  } finally {
    await lock.release();
  }
}
