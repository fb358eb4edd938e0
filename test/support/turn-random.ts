import { busyInputModes, type BusyInputModeName } from '@switchboard/core';
import { chatPrefix } from './turn-helpers.ts';

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
  | { kind: 'stop'; text: '/stop'; gapMs: number };

export interface ConversationScript {
  index: number;
  chatId: number;
  /** 'default' = no /busy, the global BUSY_INPUT_MODE (interrupt). */
  mode: BusyInputModeName | 'default';
  actions: ScenarioAction[];
}

/** Marker of a slow-stream message; one script rule answers every text containing it. */
export const slowMarker = '[slow]';

/**
 * A conversation's random script: a busy mode, then 2–6 actions (a plain
 * message, a message that makes the model call `wait` for 0.2–1.5 s, a
 * slow-stream message, /stop), each after a 0–300 ms gap. Every text starts
 * with the chat's `c<N>:` prefix and is unique, so the sim's global records
 * can be told apart per conversation and a wait rule fits one message only.
 */
export function generateScript(random: Random, index: number, chatId: number): ConversationScript {
  const mode = random.pick(['default', ...busyInputModes] as const);
  const count = random.int(2, 6);
  const actions: ScenarioAction[] = [];
  const prefix = chatPrefix(chatId);
  for (let i = 0; i < count; i++) {
    const gapMs = random.int(0, 300);
    const kind = random.weighted([
      ['plain', 35],
      ['wait', 30],
      ['slow', 20],
      ['stop', 15],
    ] as const);
    if (kind === 'plain') actions.push({ kind, text: `${prefix}a${i} hello there`, gapMs });
    else if (kind === 'wait') {
      const seconds = random.int(2, 15) / 10;
      actions.push({ kind, text: `${prefix}a${i} please wait ${seconds}s`, seconds, gapMs });
    } else if (kind === 'slow') actions.push({ kind, text: `${prefix}a${i} tell a story ${slowMarker}`, gapMs });
    else actions.push({ kind, text: '/stop', gapMs });
  }
  return { index, chatId, mode, actions };
}

/** One line per conversation, to paste into a failure message. */
export function describeScript(script: ConversationScript): string {
  const steps = script.actions.map((a) => `+${a.gapMs}ms ${a.kind === 'wait' ? `wait(${a.seconds}s)` : a.kind}`);
  return `chat ${script.chatId} mode=${script.mode}: ${steps.join(', ')}`;
}

/** Script rules for the scripted model: one `wait` tool rule per wait message (used once), one slow-stream rule. */
export function modelRules(scripts: ConversationScript[]): unknown[] {
  const waitRules = scripts.flatMap((s) =>
    s.actions.flatMap((a) =>
      a.kind === 'wait' ? [{ matchRegex: `^${escapeRegex(a.text)}$`, toolCalls: [{ name: 'wait', arguments: { seconds: a.seconds } }], times: 1 }] : [],
    ),
  );
  return [...waitRules, { match: slowMarker, replyRepeat: { text: 'lorem ipsum ', count: 100 }, chunkDelayMs: 8 }];
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
