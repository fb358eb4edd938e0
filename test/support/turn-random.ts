import { busyInputModes, type BusyInputModeName } from '@switchboard/core';
import { codexShare, describeRunAction, generateCodexScript, type ApprovalIntent } from './turn-codex-random.ts';
import { chatPrefix, lastUserText, type ModelRequest } from './turn-helpers.ts';

/** mulberry32: a tiny seeded PRNG, so a failing interleaving's script can be replayed with SEED=<n>. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Random {
  private readonly next: () => number;
  constructor(readonly seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  /** Picks by weight: [[item, weight], …]. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let roll = this.next() * total;
    for (const [item, weight] of entries) {
      roll -= weight;
      if (roll < 0) return item;
    }
    return entries[entries.length - 1]![0];
  }
}

/** The seed from SEED, or a fresh one. */
export function seedFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SEED;
  if (raw !== undefined && raw !== '') {
    const seed = Number(raw);
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`SEED must be an integer in [0, 2^32): got ${raw}`);
    return seed;
  }
  return Math.floor(Math.random() * 0xffffffff);
}

export type ScenarioAction =
  | { kind: 'plain'; text: string; gapMs: number }
  | { kind: 'wait'; text: string; seconds: number; gapMs: number }
  | { kind: 'slow'; text: string; gapMs: number }
  | { kind: 'long'; text: string; gapMs: number }
  | { kind: 'stop'; text: '/stop'; gapMs: number }
  /** Not a message: the conversation's lease key is deleted, as a Redis failover loses it. */
  | { kind: 'lease'; text: ''; gapMs: number }
  /** Not a message: a one-off schedule made through the admin API, due `delayMs` later, its prompt `text` (turn-schedules.ts). */
  | { kind: 'schedule'; text: string; delayMs: number; gapMs: number }
  /** Not a chat message: a signed `POST /hooks/{name}` whose body is `text`, delivered twice under one id when `twice` (turn-hooks.ts). */
  | { kind: 'hook'; text: string; twice: boolean; gapMs: number }
  /** A message the scripted model answers by calling the MCP tool `scen__echo` first (turn-mcp.ts). */
  | { kind: 'mcp'; text: string; gapMs: number }
  /** Codex only (turn-codex-random.ts): a message whose turn asks to run `command`, and how the user meets the question. */
  | { kind: 'run'; text: string; command: string; answer: ApprovalIntent; via: 'text' | 'button'; answerGapMs: number; gapMs: number };

export interface ConversationScript {
  index: number;
  chatId: number;
  /** 'default' = no /busy, the global BUSY_INPUT_MODE (interrupt). */
  mode: BusyInputModeName | 'default';
  actions: ScenarioAction[];
  /** The summariser takes this long for this chat (0: at once), so an interrupt can land while the summary is written. */
  summaryDelayMs: number;
  /** 'codex': switched to the Codex runtime before its first message (turn-codex-random.ts); else the default, openai. */
  runtime?: 'codex';
}

/** Marker of a slow-stream message; one script rule answers every text containing it. */
export const slowMarker = '[slow]';
/** Marker of a stream of about 4 s, longer than a lease renewal: a lost lease lands while it grows. */
export const longSlowMarker = '[slow-long]';
/** The summariser's request (packages/agent summary-prompt.ts): its one user message starts so. */
export const transcriptPrefix = 'Transcript to summarise:';
/**
 * About 820 tokens: with the scenario's 1,900-token context (threshold 1,666,
 * system prompt and tools ~353; test/support/context-sizes.ts) one long message and its echo put a session
 * over the threshold, so the next turn compresses first; alone it fits.
 */
const longFiller = 'the quick brown fox jumps over the lazy dog '.repeat(14 * 6).trim();

/**
 * A conversation's random script: a busy mode, then 2–6 actions (a plain
 * message, a message that makes the model call `wait` for 0.2–1.5 s, a
 * slow-stream message, /stop), each after a 0–300 ms gap. About a quarter of
 * the conversations also send two long messages (preflight compression,
 * half of them with a summariser slow enough to be interrupted), and about
 * one in seven loses its lease mid-turn: a 3–5 s `wait` turn, its lease key
 * deleted while it runs, then more input that wakes a new holder. Every text
 * starts with the chat's `c<N>:` prefix and is unique, so the sim's global
 * records can be told apart per conversation and a wait rule fits one
 * message only. About one conversation in five is a Codex one instead
 * (generateCodexScript, turn-codex-random.ts), unless TURN_CODEX=off.
 */
export function generateScript(random: Random, index: number, chatId: number): ConversationScript {
  // Drawn only when Codex conversations are on, so TURN_CODEX=off replays a seed's scripts of before.
  const share = codexShare();
  if (share > 0 && random.float() < share) return generateCodexScript(random, index, chatId);
  const mode = random.pick(['default', ...busyInputModes] as const);
  const count = random.int(2, 6);
  const prefix = chatPrefix(chatId);
  const actions: ScenarioAction[] = [];
  for (let i = 0; i < count; i++) actions.push(randomAction(random, prefix, i, random.int(0, 300)));
  const compress = random.float() < 0.25;
  let summaryDelayMs = compress && random.float() < 0.5 ? random.int(400, 1500) : 0;
  if (compress) {
    for (const n of [count, count + 1]) actions.splice(random.int(0, actions.length), 0, { kind: 'long', text: `${prefix}a${n} long ${longFiller}`, gapMs: random.int(0, 300) });
  }
  if (random.float() < 0.15) {
    const window = random.pick(leaseWindows());
    const after: ScenarioAction = { kind: 'plain', text: `${prefix}a${count + 3} are you there`, gapMs: random.int(0, 1500) };
    const lease: ScenarioAction = { kind: 'lease', text: '', gapMs: random.int(300, 1500) };
    if (window === 'summary') {
      // Two long messages at the end: the second's turn compresses first, with a summariser slower than a
      // lease renewal (a third of the 5 s TTL), and the lease is lost while it writes (docs/compression.md).
      summaryDelayMs = random.int(3000, 4500);
      for (const n of [count + 4, count + 5]) actions.push({ kind: 'long', text: `${prefix}a${n} long ${longFiller}`, gapMs: random.int(200, 600) });
      actions.push(lease, after);
    } else {
      const at = random.int(0, actions.length);
      const seconds = random.int(30, 50) / 10;
      const running: ScenarioAction =
        window === 'wait'
          ? { kind: 'wait', text: `${prefix}a${count + 2} please wait ${seconds}s`, seconds, gapMs: random.int(0, 300) }
          : { kind: 'slow', text: `${prefix}a${count + 2} tell a long story ${longSlowMarker}`, gapMs: random.int(0, 300) };
      actions.splice(at, 0, running, lease, after);
    }
  }
  return { index, chatId, mode, actions, summaryDelayMs };
}

/**
 * Where a lost lease can land: a `wait` turn, a streamed answer (with
 * streaming on, the growing message), a slow summary. TURN_LEASE_WINDOWS=wait
 * keeps only the first, as before streaming and the compression fence;
 * =no-stream leaves the streamed answers out.
 */
function leaseWindows(): ('wait' | 'stream' | 'summary')[] {
  if (process.env.TURN_LEASE_WINDOWS === 'wait') return ['wait'];
  return process.env.TURN_LEASE_WINDOWS === 'no-stream' ? ['wait', 'summary'] : ['wait', 'stream', 'summary'];
}

function randomAction(random: Random, prefix: string, i: number, gapMs: number): ScenarioAction {
  const kind = random.weighted([
    ['plain', 35],
    ['wait', 30],
    ['slow', 20],
    ['stop', 15],
  ] as const);
  if (kind === 'plain') return { kind, text: `${prefix}a${i} hello there`, gapMs };
  if (kind === 'wait') {
    const seconds = random.int(2, 15) / 10;
    return { kind, text: `${prefix}a${i} please wait ${seconds}s`, seconds, gapMs };
  }
  if (kind === 'slow') return { kind, text: `${prefix}a${i} tell a story ${slowMarker}`, gapMs };
  return { kind, text: '/stop', gapMs };
}

/** The summariser's requests over one chat's transcript (its one user message quotes the chat's messages). */
export function summariserRequests(requests: ModelRequest[], chatId: number): ModelRequest[] {
  return requests.filter((r) => lastUserText(r).startsWith(transcriptPrefix) && lastUserText(r).includes(chatPrefix(chatId)));
}

/** Whether the script deletes its lease key at some point. */
export function losesLease(script: ConversationScript): boolean {
  return script.actions.some((a) => a.kind === 'lease');
}

/** One line per conversation, to paste into a failure message. */
export function describeScript(script: ConversationScript): string {
  const steps = script.actions.map((a) => `+${a.gapMs}ms ${a.kind === 'wait' ? `wait(${a.seconds}s)` : a.kind === 'lease' ? 'LEASE-LOST' : a.kind === 'run' ? describeRunAction(a) : a.kind === 'schedule' ? `schedule(+${a.delayMs}ms)` : a.kind === 'hook' ? `hook${a.twice ? '×2' : ''}` : a.kind}`);
  const summary = script.summaryDelayMs > 0 ? ` summary=${script.summaryDelayMs}ms` : '';
  return `chat ${script.chatId}${script.runtime === 'codex' ? ' codex' : ''} mode=${script.mode}${summary}: ${steps.join(', ')}`;
}

/**
 * Script rules for the scripted model: the summariser's (a slow one per chat
 * that has it, then one for all), one `wait` tool rule per wait message (used
 * once), one slow-stream rule. Summariser rules come first: a summariser
 * request's last user message quotes the chat's own messages, [slow] included.
 */
export function modelRules(scripts: ConversationScript[]): unknown[] {
  const summaryText = 'SUMMARY: the user sent messages, each answered.';
  const slowSummaries = scripts.flatMap((s) =>
    s.summaryDelayMs > 0 ? [{ matchRegex: `^${transcriptPrefix}[\\s\\S]*${escapeRegex(chatPrefix(s.chatId))}`, reply: summaryText, delayMs: s.summaryDelayMs }] : [],
  );
  const waitRules = scripts.flatMap((s) =>
    s.actions.flatMap((a) =>
      a.kind === 'wait' ? [{ matchRegex: `^${escapeRegex(a.text)}$`, toolCalls: [{ name: 'wait', arguments: { seconds: a.seconds } }], times: 1 }] : [],
    ),
  );
  return [
    ...slowSummaries,
    { match: transcriptPrefix, reply: summaryText },
    ...waitRules,
    { match: longSlowMarker, replyRepeat: { text: 'dolor sit ', count: 400 }, chunkDelayMs: 10 },
    { match: slowMarker, replyRepeat: { text: 'lorem ipsum ', count: 100 }, chunkDelayMs: 8 },
  ];
}
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
