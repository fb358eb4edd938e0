import type { ConversationRun } from '../conversation-runner.ts';
import { parseTurnTag } from '../transcripts.ts';

/** One stored user message, with the chat it belongs to, in transcript order (session, then seq). */
export interface StoredUserLine {
  platform: string;
  chatId: string;
  sessionId: number;
  inboundEventId: number | null;
  createdAt: Date;
  content: string;
}

/**
 * Stored human lines against the order the user sent them. The store check
 * compares messages with inbound event ids, which follow the order the gateway
 * stored the events: a line stored late (after a later line) would pass it
 * while the user sees the answers swapped. Here the order is the transcript's,
 * which the load test sent one line after another.
 *
 * A compression copies the kept tail into the child session (same event id and
 * timestamp): such copies are skipped. Lines the test never sent to this chat
 * (fuzzed input, notices) are ignored. A line's turn
 * is found by the tag every human line starts with.
 */
export function checkSentOrder(runs: ConversationRun[], rows: StoredUserLine[]): string[] {
  const runsByChat = new Map(runs.map((run) => [`${run.chat.platform}:${run.chat.chatId}`, run]));
  const rowsByChat = new Map<string, StoredUserLine[]>();
  for (const row of rows) {
    const key = `${row.platform}:${row.chatId}`;
    if (!runsByChat.has(key)) continue;
    const list = rowsByChat.get(key) ?? [];
    list.push(row);
    rowsByChat.set(key, list);
  }
  const problems: string[] = [];
  for (const [key, chatRows] of rowsByChat) {
    const run = runsByChat.get(key) as ConversationRun;
    const turns = matchTurns(run, dropCompressionCopies(chatRows));
    const swapped = turns.findIndex((turn, i) => i > 0 && turn < (turns[i - 1] as number));
    if (swapped > 0) problems.push(`${key}: line ${turns[swapped]} stored after line ${turns[swapped - 1]} (stored order ${turns.slice(Math.max(0, swapped - 3), swapped + 2).join(',')})`);
  }
  return problems;
}

function dropCompressionCopies(rows: StoredUserLine[]): StoredUserLine[] {
  const firstSession = new Map<string, number>();
  return rows.filter((row) => {
    const key = `${row.inboundEventId}:${row.createdAt.getTime()}`;
    const seenIn = firstSession.get(key);
    if (seenIn !== undefined && seenIn !== row.sessionId) return false;
    firstSession.set(key, row.sessionId);
    return true;
  });
}

/** The script's turn index of each stored line, read from its tag (every human line starts with one); untagged texts dropped. */
function matchTurns(run: ConversationRun, rows: StoredUserLine[]): number[] {
  return rows.flatMap((row) => {
    const tag = parseTurnTag(row.content);
    return tag?.conversationIndex === run.script.index ? [tag.turn] : [];
  });
}
