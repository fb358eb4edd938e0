import type { ConversationRun } from './conversation-runner.ts';
import type { BotReply } from './drivers/platform-driver.ts';
import type { BusyMode } from './options.ts';
import { formatRecordedReply } from './posted-reply.ts';
import { parseTurnTag } from './transcripts.ts';

export interface ReplyCounts {
  /** Replies the system owed: one per delivered line, minus the superseded ones. */
  expected: number;
  received: number;
  /** Owed replies that never came. */
  lost: number;
  /** Extra copies of a reply already received. */
  duplicated: number;
  /** Replies that came after a reply to a later line of the same chat. */
  outOfOrder: number;
  /** Replies naming a turn of this chat whose text is not the recorded one as the platform formats it (posted-reply.ts). */
  mismatched: number;
  /** Bot messages that name no turn of this chat (an error notice, another chat's reply). */
  unexpected: number;
  /** Interrupt mode: lines whose turn was cut short by the next line, so no reply is owed. */
  superseded: number;
}

export interface ReplyProblem {
  chatId: string;
  kind: 'lost' | 'duplicated' | 'out-of-order' | 'mismatched' | 'unexpected';
  turn?: number;
  detail: string;
}

export function createReplyCounts(): ReplyCounts {
  return { expected: 0, received: 0, lost: 0, duplicated: 0, outOfOrder: 0, mismatched: 0, unexpected: 0, superseded: 0 };
}

/**
 * Checks everything the platform recorded in one chat against the known
 * script. What is owed depends on the busy-input mode:
 * - queue: every delivered line gets its own turn, so every line is owed its
 *   reply, in the order the lines were sent;
 * - interrupt: a line followed by another before its reply came may be cut
 *   short (the next turn answers the newer line), so its reply is optional:
 *   counted as superseded when absent, as normal when present. The last line
 *   of every burst is owed.
 * In both modes a reply may appear once, and replies must come in line order,
 * and its text must be the recorded reply as the bot formats it on the chat's
 * platform (a Telegram reply that fell back to plain text therefore counts as
 * mismatched when the recorded text has any formatting: the bot wrote HTML
 * Telegram refused).
 */
/** Where a check adds up what it found: the counts, and the problems (the first 200 across every chat checked into it). */
export interface ReplyTally {
  counts: ReplyCounts;
  problems: ReplyProblem[];
}

export function checkConversationReplies(run: ConversationRun, replies: BotReply[], busyMode: BusyMode, { counts, problems }: ReplyTally): void {
  const chatId = run.chat.chatId;
  const note = (problem: Omit<ReplyProblem, 'chatId'>) => {
    if (problems.length < 200) problems.push({ chatId, ...problem });
  };
  const seen = new Map<number, number>();
  let highestTurn = -1;
  for (const reply of replies) {
    const tag = parseTurnTag(reply.text);
    const record = tag?.conversationIndex === run.script.index ? run.records[tag.turn] : undefined;
    if (!tag || !record) {
      counts.unexpected += 1;
      note({ kind: 'unexpected', detail: reply.text.slice(0, 120) });
      continue;
    }
    counts.received += 1;
    const copies = (seen.get(tag.turn) ?? 0) + 1;
    seen.set(tag.turn, copies);
    if (copies > 1) {
      counts.duplicated += 1;
      note({ kind: 'duplicated', turn: tag.turn, detail: `copy ${copies} of the reply` });
      continue;
    }
    const recorded = run.script.turns[tag.turn]?.reply;
    if (recorded === undefined || reply.text !== formatRecordedReply(run.chat.platform, recorded)) {
      counts.mismatched += 1;
      note({ kind: 'mismatched', turn: tag.turn, detail: reply.text.slice(0, 120) });
    }
    if (tag.turn < highestTurn) {
      counts.outOfOrder += 1;
      note({ kind: 'out-of-order', turn: tag.turn, detail: `came after the reply to turn ${highestTurn}` });
    } else {
      highestTurn = tag.turn;
    }
  }

  const records = run.records;
  for (const record of records) {
    if (!record?.delivered) continue;
    const next = records[record.turn + 1];
    const cutShort = busyMode === 'interrupt' && next?.delivered === true && next.sentAt < (record.repliedAt ?? Number.POSITIVE_INFINITY);
    if (seen.has(record.turn)) {
      counts.expected += 1;
    } else if (cutShort) {
      counts.superseded += 1;
    } else {
      counts.expected += 1;
      counts.lost += 1;
      note({ kind: 'lost', turn: record.turn, detail: `no reply to "${run.script.turns[record.turn]?.human.slice(0, 80) ?? ''}"` });
    }
  }
}
