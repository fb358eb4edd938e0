export interface PreflightInput {
  /** System prompt and tool schemas: sent with every request. */
  fixedTokens: number;
  /** The session's running estimate (kept as messages are stored). */
  sessionTokens: number;
  /** The new input of this turn. */
  inputTokens: number;
  contextTokens: number;
  /** COMPRESSION_THRESHOLD: share of the context at which compression starts. */
  threshold: number;
}

/** Tokens the next request would carry, from the running estimates alone (docs/compression.md). */
export function estimateRequestTokens(input: Pick<PreflightInput, 'fixedTokens' | 'sessionTokens' | 'inputTokens'>): number {
  return input.fixedTokens + input.sessionTokens + input.inputTokens;
}

/**
 * The preflight check (docs/compression.md): compress before the request when it would
 * reach the threshold. O(1): it reads running totals, never the history, so
 * its cost does not grow with the conversation.
 */
export function needsCompression(input: PreflightInput): boolean {
  return estimateRequestTokens(input) >= input.contextTokens * input.threshold;
}
