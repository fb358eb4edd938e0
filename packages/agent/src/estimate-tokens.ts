import { countO200kTokens as countTokens } from './o200k-counter.ts';

/** Per-message overhead the chat format adds (role markers, separators), as OpenAI documents it. */
const messageOverheadTokens = 4;

/**
 * The longest piece handed to the tokenizer at once. Its BPE merge is
 * quadratic in the length of a run with no break in it: one Slack message of
 * 40,000 repeated `ش` (Slack allows 40,000 characters) took 14 s, 200,000
 * `a` took a minute, all of it on the worker's event loop, long enough for
 * its job locks and leases to lapse (found by the fuzzer, issue 17). In
 * pieces of at most 256 characters the same message takes under 20 ms.
 */
const pieceLength = 256;

/** o200k token count of one transcript message, including its share of the chat framing. */
export function estimateMessageTokens(content: string, extra = ''): number {
  return countInPieces(content) + (extra ? countInPieces(extra) : 0) + messageOverheadTokens;
}

/**
 * The token count of `text`, counted piece by piece. A piece ends, where its
 * second half has one, before a space that follows a non-space: no piece of
 * o200k's pre-tokenizer spans from a non-space into a space, so ordinary text
 * counts exactly as in one call. Else it ends at the length limit (a run
 * with no such space is counted approximately), never inside a surrogate pair.
 */
export function countInPieces(text: string): number {
  if (text.length <= pieceLength) return countTokens(text);
  let total = 0;
  for (const piece of pieces(text)) total += countTokens(piece);
  return total;
}

/**
 * The same count as estimateMessageTokens, with `pause()` awaited after every
 * `charsPerPause` characters: a long document (up to MEDIA_DOCUMENT_MAX_CHARS)
 * is counted in slices, so the worker's other conversations, its lease
 * renewals and its heartbeat run in between (issue 30, finding 3). The pause
 * is the caller's (a setImmediate in the worker), which keeps this pure.
 */
export async function estimateMessageTokensPaced(content: string, pause: () => Promise<void>, charsPerPause = 32_768): Promise<number> {
  if (content.length <= charsPerPause) return estimateMessageTokens(content);
  let total = messageOverheadTokens;
  let sincePause = 0;
  for (const piece of pieces(content)) {
    total += countTokens(piece);
    sincePause += piece.length;
    if (sincePause >= charsPerPause) {
      sincePause = 0;
      await pause();
    }
  }
  return total;
}

/** The pieces countInPieces counts, in order (see there for where a piece ends). */
function* pieces(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + pieceLength, text.length);
    if (end < text.length) {
      const cut = wordBoundaryBefore(text, end, start + pieceLength / 2);
      if (cut !== -1) end = cut;
      else if (isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    }
    yield text.slice(start, end);
    start = end;
  }
}

/** The last index in (floor, end) holding a space that follows a non-whitespace character, or -1. */
function wordBoundaryBefore(text: string, end: number, floor: number): number {
  for (let i = end - 1; i > floor; i--) {
    if (text.charCodeAt(i) === 0x20 && !/\s/.test(text.charAt(i - 1))) return i;
  }
  return -1;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
