/**
 * The rules of what a compression's result means for the next one
 * (docs/compression.md, "Failure handling"): when a summary counts as
 * shrinking the session, when a session stops compressing automatically, and
 * how long a failed summariser backs off. The worker decides with these; the
 * one rule that must stay inside its SQL statement (a failure is counted with
 * an atomic increment) takes its parameters from here, and a db-level test
 * checks that the two agree (apps/worker/src/sql-rules.test.ts).
 */

/** A compression must leave the session below this share of its tokens to count as shrinking. */
export const compressionMinimumShrink = 0.9;

/** Compressions in a row that do not shrink, after which automatic compression stops (no loops). */
export const nonShrinkingCompressionsToBlock = 2;

/** The backoff after a failure doubles at most this many times (COMPRESSION_BACKOFF_MS × 2^6 at most). */
export const compressionBackoffMaxDoublings = 6;

export interface CompressionPolicy {
  /** COMPRESSION_BACKOFF_MS. */
  backoffMs: number;
  /** COMPRESSION_MAX_ATTEMPTS: summariser failures in a row after which automatic compression stops. */
  maxAttempts: number;
}

/** What a compression that produced a summary leaves on the child session. */
export interface CompressionVerdict {
  shrunk: boolean;
  /** Consecutive compressions that did not shrink (or failed), carried to the child; 0 after one that shrank. */
  compressFailures: number;
  /** Automatic compression stops until a person asks. */
  blocked: boolean;
}

/**
 * Judges a finished summary: it shrinks when summary plus kept messages come
 * below `compressionMinimumShrink` of the session's tokens. One that does not
 * counts as a failure, and `nonShrinkingCompressionsToBlock` in a row block
 * the child: a summariser that writes more than it replaces must not run on
 * every turn.
 */
export function judgeCompression(input: { summaryTokens: number; keptTokens: number; sessionTokens: number; failuresBefore: number }): CompressionVerdict {
  const shrunk = input.summaryTokens + input.keptTokens < input.sessionTokens * compressionMinimumShrink;
  const compressFailures = shrunk ? 0 : input.failuresBefore + 1;
  return { shrunk, compressFailures, blocked: !shrunk && compressFailures >= nonShrinkingCompressionsToBlock };
}

/** What a failed summariser leaves on the session: one more failure, a backoff doubling per earlier failure, blocked at `maxAttempts`. */
export function judgeCompressionFailure(before: { failures: number; blocked: boolean }, policy: CompressionPolicy): { failures: number; blocked: boolean; retryInMs: number } {
  const failures = before.failures + 1;
  return {
    failures,
    blocked: before.blocked || failures >= policy.maxAttempts,
    retryInMs: policy.backoffMs * 2 ** Math.min(before.failures, compressionBackoffMaxDoublings),
  };
}

/**
 * Whether an automatic compression may run now (a person asking, `force`,
 * ignores both): not on a blocked session, not before its backoff ends.
 */
export function automaticCompressionGate(session: { blocked: boolean; nextCompressAtMs: number | null }, nowMs: number, force: boolean): 'run' | 'blocked' | 'backoff' {
  if (force) return 'run';
  if (session.blocked) return 'blocked';
  if (session.nextCompressAtMs !== null && session.nextCompressAtMs > nowMs) return 'backoff';
  return 'run';
}

/**
 * Whether the messages to summarise, not counting an earlier summary, hold
 * the share of the session a compression must cut to count as shrinking.
 * Below it, a summary could only shrink the session by rewriting the earlier
 * summary shorter: a summary of a summary, which costs a model call and loses
 * context. This is what makes a second /compact right after the first a no-op.
 */
export function hasEnoughToSummarise(freshTokens: number, sessionTokens: number): boolean {
  return freshTokens > 0 && freshTokens >= sessionTokens * (1 - compressionMinimumShrink);
}
