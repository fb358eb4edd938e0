import type { ConversationRun } from '../conversation-runner.ts';
import type { BotReply } from '../drivers/platform-driver.ts';
import { checkConversationReplies, createReplyCounts, type ReplyCounts, type ReplyProblem } from '../reply-checker.ts';
import { parseTurnTag } from '../transcripts.ts';
import type { FaultKind } from './fault-schedule.ts';
import type { InjectedFault } from './fault-injectors.ts';

/**
 * What users saw, judged per platform and per fault: the reply counts the
 * load test makes, split by platform (each has its own duplicate promise),
 * and how long each kind of fault kept conversations waiting.
 */

export type RepliesByChat = Map<string, Map<string, BotReply[]>>;

export interface PlatformReplies extends ReplyCounts {
  /** Lost replies whose turn the model failed while it was down on purpose: the user got the short error line instead (docs/turns.md, Model errors). */
  modelErrorLines: number;
  /** The first lost replies: chat, turn and when the line was sent, to find them in the logs. */
  lostSamples: string[];
  /** Chat, turn and time of replies that came after a later line's reply, for finding the cause. */
  reorderedSamples: string[];
  /** `platform:chatId` of the chats with a reordered or lost reply (their database rows go into the report). */
  failedChats: string[];
}

export interface RecoveryFigures {
  faults: number;
  /** Conversations waiting for a reply when the fault ended. */
  affected: number;
  /** Conversations whose line sent during the fault never got its reply (those lines are also counted as lost). */
  unrecovered: number;
  maxMs: number;
  p99Ms: number;
  /**
   * The same wait counted from the moment the fault began, over the
   * conversations waiting then: for a process kill, how long users waited
   * with another live process at hand (issue 19: within 10 s of a worker kill).
   */
  maxSinceStartMs: number;
  p99SinceStartMs: number;
}

export function countRepliesByPlatform(runs: ConversationRun[], replies: RepliesByChat, faults: InjectedFault[]): Record<string, PlatformReplies> {
  const byPlatform: Record<string, PlatformReplies> = {};
  const modelDown = faults.filter((f) => f.fault.kind === 'model-failing');
  for (const run of runs) {
    const platform = run.chat.platform;
    const counts = (byPlatform[platform] ??= { ...createReplyCounts(), modelErrorLines: 0, lostSamples: [], reorderedSamples: [], failedChats: [] });
    const chatReplies = replies.get(platform)?.get(run.chat.chatId) ?? [];
    const problems: ReplyProblem[] = [];
    checkConversationReplies(run, chatReplies, 'queue', { counts, problems });
    for (const problem of problems) {
      if (problem.kind === 'out-of-order' || problem.kind === 'lost') counts.failedChats.push(`${platform}:${run.chat.chatId}`);
      if (problem.kind === 'out-of-order' && counts.reorderedSamples.length < 10) {
        const sentAt = run.records[problem.turn ?? 0]?.sentAt ?? 0;
        counts.reorderedSamples.push(`${platform} chat ${run.chat.chatId} turn ${problem.turn} sent ${new Date(sentAt).toISOString()}: ${problem.detail}`);
      }
      if (problem.kind !== 'lost' || problem.turn === undefined) continue;
      const sentAt = run.records[problem.turn]?.sentAt ?? 0;
      if (answeredWithModelError(sentAt, chatReplies, run.script.index, modelDown)) {
        counts.lost -= 1;
        counts.modelErrorLines += 1;
      } else if (counts.lostSamples.length < 10) {
        counts.lostSamples.push(`${platform} chat ${run.chat.chatId} turn ${problem.turn} sent ${new Date(sentAt).toISOString()}: ${problem.detail}`);
      }
    }
  }
  return byPlatform;
}

/** Sent before a deliberate model outage ended, and the chat got an untagged line (the error line) during it or its retries. */
function answeredWithModelError(sentAt: number, replies: BotReply[], scriptIndex: number, outages: InjectedFault[]): boolean {
  const retrySlackMs = 30_000;
  return outages.some(
    (outage) =>
      sentAt <= outage.endedAt &&
      replies.some((r) => r.at >= outage.startedAt && r.at <= outage.endedAt + retrySlackMs && parseTurnTag(r.text)?.conversationIndex !== scriptIndex),
  );
}

/**
 * Recovery after each fault: from the moment it was undone until the next
 * reply in each conversation that was waiting for one then (a line sent
 * before, its reply not yet come). Max and p99 per kind.
 */
export function measureRecovery(runs: ConversationRun[], replies: RepliesByChat, faults: InjectedFault[]): Record<string, RecoveryFigures> {
  const samples = new Map<FaultKind, { faults: number; times: number[]; sinceStart: number[]; unrecovered: number }>();
  for (const injected of faults) {
    const entry = samples.get(injected.fault.kind) ?? { faults: 0, times: [], sinceStart: [], unrecovered: 0 };
    samples.set(injected.fault.kind, entry);
    entry.faults += 1;
    const after = recoveriesAfter(injected, runs, replies);
    entry.unrecovered += after.unrecovered;
    entry.times.push(...after.times.map((t) => t.ms));
    entry.sinceStart.push(...recoveriesAfter(injected, runs, replies, injected.startedAt).times.map((t) => t.ms));
  }
  const figures: Record<string, RecoveryFigures> = {};
  for (const [kind, entry] of samples) {
    const sorted = [...entry.times].sort((a, b) => a - b);
    const sinceStart = [...entry.sinceStart].sort((a, b) => a - b);
    figures[kind] = {
      faults: entry.faults,
      affected: sorted.length + entry.unrecovered,
      unrecovered: entry.unrecovered,
      maxMs: sorted.at(-1) ?? 0,
      p99Ms: percentile99(sorted),
      maxSinceStartMs: sinceStart.at(-1) ?? 0,
      p99SinceStartMs: percentile99(sinceStart),
    };
  }
  return figures;
}

/** The slowest conversation to recover after each fault (chat and ms), in the faults' order: where to look when a figure is high. */
export function findSlowestRecoveries(runs: ConversationRun[], replies: RepliesByChat, faults: InjectedFault[]): ({ chat: string; ms: number } | undefined)[] {
  return faults.map((injected) => recoveriesAfter(injected, runs, replies).times.sort((a, b) => b.ms - a.ms)[0]);
}

const percentile99 = (sorted: number[]): number => (sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)] as number));

/** Conversations waiting for a reply at `end` (the fault's end unless given) and how long until their next reply. */
function recoveriesAfter(injected: InjectedFault, runs: ConversationRun[], replies: RepliesByChat, end = injected.endedAt): { times: { chat: string; ms: number }[]; unrecovered: number } {
  const times: { chat: string; ms: number }[] = [];
  let unrecovered = 0;
  for (const run of runs) {
    const chatReplies = replies.get(run.chat.platform)?.get(run.chat.chatId) ?? [];
    const answeredAt = firstReplyAtByTurn(chatReplies, run.script.index);
    const pending = run.records.filter((r) => r?.delivered && r.sentAt < end && !((answeredAt.get(r.turn) ?? Infinity) <= end));
    if (pending.length === 0) continue;
    // A line never answered is counted as lost; here it is unrecovered only when sent while this fault was on (an older loss is an earlier fault's).
    if (pending.every((r) => !answeredAt.has(r.turn))) {
      if (pending.some((r) => r.sentAt >= injected.startedAt)) unrecovered += 1;
      continue;
    }
    const next = chatReplies.find((r) => r.at >= end);
    if (next) times.push({ chat: `${run.chat.platform}:${run.chat.chatId}`, ms: next.at - end });
  }
  return { times, unrecovered };
}

function firstReplyAtByTurn(replies: BotReply[], scriptIndex: number): Map<number, number> {
  const at = new Map<number, number>();
  for (const reply of replies) {
    const tag = parseTurnTag(reply.text);
    if (tag?.conversationIndex === scriptIndex && !at.has(tag.turn)) at.set(tag.turn, reply.at);
  }
  return at;
}

/** Replies per second over the run, for the timeline chart. */
export function countRepliesPerSecond(replies: RepliesByChat, startedAt: number): number[] {
  const perSecond: number[] = [];
  for (const chats of replies.values()) {
    for (const list of chats.values()) {
      for (const reply of list) {
        const second = Math.max(0, Math.floor((reply.at - startedAt) / 1000));
        while (perSecond.length <= second) perSecond.push(0);
        perSecond[second] = (perSecond[second] as number) + 1;
      }
    }
  }
  return perSecond;
}
