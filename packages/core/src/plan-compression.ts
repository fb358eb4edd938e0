export interface CompressibleMessage {
  role: 'user' | 'assistant' | 'tool';
  tokens: number;
  /** Assistant messages that called tools; their results must stay with them. */
  toolCalls?: readonly unknown[] | null;
}

export interface CompressionPlan<T> {
  /** Oldest messages, to be summarised (with any earlier summary among them). */
  summarise: T[];
  /** Newest messages, kept verbatim in the child session. */
  keep: T[];
}

/**
 * Splits a session for compression (docs/compression.md): keep the newest messages
 * whose tokens fit `keepBudget`, summarise the rest. The cut never leaves a
 * tool result at the start of the kept part (it moves back to the assistant
 * message that called the tool), so no tool result is separated from its
 * call. Returns null when nothing would be summarised.
 */
export function planCompression<T extends CompressibleMessage>(messages: readonly T[], keepBudget: number): CompressionPlan<T> | null {
  let cut = messages.length;
  let kept = 0;
  while (cut > 0) {
    const candidate = messages[cut - 1] as T;
    if (kept + candidate.tokens > keepBudget) break;
    kept += candidate.tokens;
    cut--;
  }
  cut = moveCutBeforeToolResults(messages, cut);
  if (cut <= 0) return null;
  return { summarise: messages.slice(0, cut), keep: messages.slice(cut) };
}

/**
 * Leaves the oldest messages out of one request so it fits `budget` tokens,
 * when compression could not run (docs/compression.md). Same rule: the first message
 * sent is never an orphan tool result.
 */
export function trimOldestToFit<T extends CompressibleMessage>(messages: readonly T[], budget: number): { sent: T[]; dropped: number } {
  let total = messages.reduce((sum, m) => sum + m.tokens, 0);
  let start = 0;
  while (start < messages.length && total > budget) {
    total -= (messages[start] as T).tokens;
    start++;
  }
  while (start < messages.length && (messages[start] as T).role === 'tool') {
    start++;
  }
  return { sent: messages.slice(start), dropped: start };
}

function moveCutBeforeToolResults<T extends CompressibleMessage>(messages: readonly T[], cut: number): number {
  let index = cut;
  while (index > 0 && index < messages.length && (messages[index] as T).role === 'tool') index--;
  return index;
}
