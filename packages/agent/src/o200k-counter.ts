import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * o200k token counts from a compact table: every token's bytes in one
 * buffer and an open-addressing hash from bytes to rank, about 5 MiB in
 * typed arrays. gpt-tokenizer's own tables cost the worker about 50 MiB of
 * RSS (200,000 strings, a Map over them, its two-byte source text and a
 * 100,000-entry merge cache with no byte bound); counting is all the worker
 * does with them. The table is read on the first count, so a process that
 * never counts never holds it. Counts are gpt-tokenizer's `countTokens`
 * exactly (property-tested against it), except that text spelling a special
 * token such as `<|endoftext|>` counts as the ordinary text it is instead
 * of throwing: this is user input, never a control token.
 */

/** The ranks file, named as gpt-tokenizer ships it (`npm run build` copies it into dist/). */
export const o200kRanksFileName = 'o200k_base.tiktoken';

/** o200k's pre-tokenizer, as gpt-tokenizer and tiktoken define it: no token spans two of its matches. */
const contraction = String.raw`(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?`;
const splitPattern = new RegExp(
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${contraction}` +
    String.raw`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${contraction}` +
    String.raw`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  'gu',
);

interface RankTable {
  /** Every token's bytes, back to back, in rank order. */
  bytes: Uint8Array;
  /** Token `rank` is bytes[starts[rank], starts[rank + 1]). */
  starts: Uint32Array;
  /** Open addressing on FNV-1a of the bytes: rank + 1, 0 for an empty slot. */
  slots: Int32Array;
}

let table: RankTable | undefined;

/** Where the ranks file is: beside the bundle in a production build, else in gpt-tokenizer's package. */
function findRanksFile(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  // A bundle's chunk sits in dist/ or dist/chunks/; the build puts the file in dist/.
  for (let up = 0; up < 2; up += 1, dir = dirname(dir)) {
    const candidate = join(dir, o200kRanksFileName);
    if (existsSync(candidate)) return candidate;
  }
  return createRequire(import.meta.url).resolve(`gpt-tokenizer/data/${o200kRanksFileName}`);
}

function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  return hash >>> 0;
}

const base64Values = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) base64Values[c.charCodeAt(0)] = i;

/** Decodes `base64` into out from `at` on; returns where it ended. */
function decodeBase64Into(base64: Uint8Array, out: Uint8Array, at: number): number {
  let bits = 0;
  let count = 0;
  for (const char of base64) {
    const value = base64Values[char] ?? -1;
    if (value < 0) continue; // '=' padding
    bits = (bits << 6) | value;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out[at++] = (bits >> count) & 0xff;
    }
  }
  return at;
}

/** Bytes that base64 text[from, to) decodes to. */
function decodedLength(text: Buffer, from: number, to: number): number {
  let padding = 0;
  while (to - padding > from && text[to - 1 - padding] === 0x3d) padding += 1;
  return ((to - from) * 3) / 4 - padding;
}

/**
 * Parses `<base64 bytes> <rank>` lines into the compact table. Typed arrays
 * only, no string per line: 200,000 short-lived strings grew the heap by
 * 35 MiB that V8 kept long after the load.
 */
function loadRankTable(path: string): RankTable {
  const text = readFileSync(path);
  const lineCount = text.reduce((n, byte) => (byte === 0x0a ? n + 1 : n), 1);
  const lineFrom = new Uint32Array(lineCount);
  const lineSpace = new Uint32Array(lineCount);
  const lineRank = new Int32Array(lineCount).fill(-1);
  let maxRank = -1;
  let size = 0;
  for (let start = 0, line = 0; start < text.length; line += 1) {
    let end = text.indexOf(0x0a, start);
    if (end === -1) end = text.length;
    const space = text.indexOf(0x20, start);
    if (space > start && space < end) {
      let rank = 0;
      for (let i = space + 1; i < end; i++) rank = rank * 10 + ((text[i] as number) - 0x30);
      lineFrom[line] = start;
      lineSpace[line] = space;
      lineRank[line] = rank;
      maxRank = Math.max(maxRank, rank);
      size += decodedLength(text, start, space);
    }
    start = end + 1;
  }
  const byRank = new Int32Array(maxRank + 1).fill(-1);
  lineRank.forEach((rank, line) => {
    if (rank >= 0) byRank[rank] = line;
  });
  const bytes = new Uint8Array(size);
  const starts = new Uint32Array(maxRank + 2);
  let at = 0;
  for (let rank = 0; rank <= maxRank; rank++) {
    starts[rank] = at;
    const line = byRank[rank] as number;
    if (line >= 0) at = decodeBase64Into(text.subarray(lineFrom[line], lineSpace[line]), bytes, at);
  }
  starts[maxRank + 1] = at;
  return { bytes, starts, slots: buildSlots(bytes, starts) };
}

function buildSlots(bytes: Uint8Array, starts: Uint32Array): Int32Array {
  let size = 1;
  while (size < starts.length * 2) size *= 2;
  const slots = new Int32Array(size);
  for (let rank = 0; rank < starts.length - 1; rank++) {
    const from = starts[rank] as number;
    const to = starts[rank + 1] as number;
    if (to === from) continue;
    let slot = hashBytes(bytes, from, to) & (size - 1);
    while (slots[slot] !== 0) slot = (slot + 1) & (size - 1);
    slots[slot] = rank + 1;
  }
  return slots;
}

/** The rank of bytes[from, to), or -1 when no token is spelled so. */
function rankOf(t: RankTable, bytes: Uint8Array, from: number, to: number): number {
  const mask = t.slots.length - 1;
  const length = to - from;
  for (let slot = hashBytes(bytes, from, to) & mask; ; slot = (slot + 1) & mask) {
    const entry = t.slots[slot] as number;
    if (entry === 0) return -1;
    const rank = entry - 1;
    const start = t.starts[rank] as number;
    if ((t.starts[rank + 1] as number) - start !== length) continue;
    let same = true;
    for (let i = 0; i < length && same; i++) same = t.bytes[start + i] === bytes[from + i];
    if (same) return rank;
  }
}

/**
 * How many tokens byte-pair merging makes of one pre-token: tiktoken's
 * merge, the adjacent pair of lowest rank first, leftmost on a tie.
 */
function countMerged(t: RankTable, piece: Uint8Array, length: number): number {
  if (rankOf(t, piece, 0, length) !== -1) return 1;
  const starts = Array.from({ length: length + 1 }, (_, i) => i);
  const pairRank = (i: number) => (i + 2 < starts.length ? rankOf(t, piece, starts[i] as number, starts[i + 2] as number) : -1);
  const ranks = starts.map((_, i) => pairRank(i));
  for (;;) {
    let lowest = -1;
    for (let i = 0; i < ranks.length; i++) {
      const rank = ranks[i] as number;
      if (rank !== -1 && (lowest === -1 || rank < (ranks[lowest] as number))) lowest = i;
    }
    if (lowest === -1) return starts.length - 1;
    starts.splice(lowest + 1, 1);
    ranks.splice(lowest + 1, 1);
    ranks[lowest] = pairRank(lowest);
    if (lowest > 0) ranks[lowest - 1] = pairRank(lowest - 1);
  }
}

const encoder = new TextEncoder();
/** One pre-token's UTF-8 at a time (a UTF-16 unit is at most 3 bytes); grown when a longer one comes. */
let scratch = new Uint8Array(1024);

/** The o200k token count of `text`: gpt-tokenizer's `countTokens`, from the compact table. */
export function countO200kTokens(text: string): number {
  table ??= loadRankTable(findRanksFile());
  let count = 0;
  for (const [match] of text.matchAll(splitPattern)) {
    if (match.length * 3 > scratch.length) scratch = new Uint8Array(match.length * 3);
    count += countMerged(table, scratch, encoder.encodeInto(match, scratch).written);
  }
  return count;
}

/** Whether this process has read the ranks table (the lazy-loading test asks). */
export function isO200kTableLoaded(): boolean {
  return table !== undefined;
}
