import { setTimeout as sleep } from 'node:timers/promises';
import type { BotReply, ChatHandle, PlatformDriver } from './drivers/platform-driver.ts';
import type { Pacing } from './options.ts';
import { parseTurnTag, type ScriptedConversation } from './transcripts.ts';

/** One human line as it went out, and when its reply came back. */
export interface TurnRecord {
  turn: number;
  /** Epoch ms just before the delivery was asked for. */
  sentAt: number;
  delivered: boolean;
  status: number;
  /** Absent where the platform has no ack (Discord's Gateway). */
  ackMs?: number;
  /** Sent while the previous turn was still running (a busy-input burst). */
  burst: boolean;
  /** When the platform recorded the first reply naming this turn (epoch ms). */
  repliedAt?: number;
  error?: string;
}

export interface ConversationRun {
  instance: number;
  script: ScriptedConversation;
  chat: ChatHandle;
  turnCount: number;
  records: TurnRecord[];
  timeouts: number;
}

export interface RunContext {
  driver(chat: ChatHandle): PlatformDriver;
  pacing: Pacing;
  burstFraction: number;
  modelLatencyMs: number;
  turnTimeoutMs: number;
  random(): number;
  /** True once no new line may be sent (deadline passed or the run was stopped). */
  stopped(): boolean;
  /** Resolves when the global rate allows the next send (rate pacing), at once otherwise. */
  takeSendSlot(): Promise<void>;
  onReply(record: TurnRecord): void;
  onError(kind: string, detail: string): void;
  signal: AbortSignal;
}

/**
 * Plays one conversation: each human line goes out after the bot answered the
 * previous one (plus think time, within the global rate), except burst lines,
 * which go out while the previous turn still runs. Replies are matched to
 * turns by their tag as they arrive; the authoritative loss/duplicate/order
 * check runs on the platform's full record at the end (reply-checker.ts).
 */
export async function runConversation(ctx: RunContext, run: ConversationRun): Promise<void> {
  const driver = ctx.driver(run.chat);
  let cursor = 0;
  let lastSent: TurnRecord | undefined;

  const awaitReply = async (target: TurnRecord): Promise<void> => {
    while (target.repliedAt === undefined && !ctx.signal.aborted) {
      const remaining = target.sentAt + ctx.turnTimeoutMs - Date.now();
      if (remaining <= 0) {
        run.timeouts += 1;
        ctx.onError('timeout', `chat ${run.chat.chatId} turn ${target.turn}: no reply within ${ctx.turnTimeoutMs} ms`);
        return;
      }
      let replies: BotReply[];
      try {
        replies = await driver.waitForReplies(run.chat, cursor, Math.min(remaining, 60_000), ctx.signal);
      } catch (error) {
        if (ctx.signal.aborted) return;
        ctx.onError('wait', `chat ${run.chat.chatId}: ${error instanceof Error ? error.message : String(error)}`);
        await sleep(100);
        continue;
      }
      for (const reply of replies) {
        cursor = Math.max(cursor, reply.order);
        const tag = parseTurnTag(reply.text);
        if (tag?.conversationIndex !== run.script.index) continue;
        const record = run.records[tag.turn];
        if (record && record.repliedAt === undefined) {
          record.repliedAt = reply.at;
          ctx.onReply(record);
        }
      }
    }
  };

  for (let turn = 0; turn < run.turnCount; turn++) {
    if (ctx.stopped()) break;
    const burst = lastSent !== undefined && ctx.random() < ctx.burstFraction;
    if (burst) {
      // Half the model's latency in: the previous turn is then most likely inside its model call, the case interrupt and queue handle.
      if (ctx.modelLatencyMs > 0) await sleep(ctx.modelLatencyMs / 2);
    } else if (lastSent) {
      await awaitReply(lastSent);
      if (ctx.pacing.kind === 'think' && ctx.pacing.thinkMs > 0) await sleep(ctx.pacing.thinkMs);
    }
    await ctx.takeSendSlot();
    if (ctx.stopped()) break;
    const line = run.script.turns[turn];
    if (!line) break;
    const sentAt = Date.now();
    const outcome = await driver.sendHuman(run.chat, line.human);
    const record: TurnRecord = { turn, sentAt, delivered: outcome.delivered, status: outcome.status, burst };
    if (outcome.ackMs !== undefined) record.ackMs = outcome.ackMs;
    if (outcome.error) record.error = outcome.error;
    run.records[turn] = record;
    if (!outcome.delivered) {
      ctx.onError('delivery', `chat ${run.chat.chatId} turn ${turn}: ${outcome.error ?? `status ${outcome.status}`}`);
      continue;
    }
    lastSent = record;
  }
  if (lastSent) await awaitReply(lastSent);
}

/** A fixed global send rate shared by every conversation (rate pacing); free otherwise. */
export function createSendGate(pacing: Pacing): () => Promise<void> {
  if (pacing.kind !== 'rate') return async () => undefined;
  const intervalMs = 1000 / pacing.turnsPerSecond;
  let nextSlot = performance.now();
  return async () => {
    const now = performance.now();
    const slot = Math.max(now, nextSlot);
    nextSlot = slot + intervalMs;
    if (slot > now) await sleep(slot - now);
  };
}

/** mulberry32: a seeded generator, so a burst pattern can be replayed exactly. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
