import { createHash } from 'node:crypto';

export interface TranscriptMessageLike {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  toolCallId?: string | null;
  toolName?: string | null;
  toolCalls?: unknown[] | null;
}

export interface ToolTail {
  /** Index of the first tool message of the tail. */
  start: number;
  /** The tool messages of the tail, in order. */
  count: number;
  /** Hash over each tool message's call id, tool name and content hash, in order (docs/turns.md, "The recovery note"). */
  key: string;
}

/**
 * The tool tail of a session: its last run of tool messages after an
 * assistant message with tool_calls, with no assistant message after them —
 * tool output the model never got to read. Null when there is none.
 *
 * User messages may follow the run: they are the input of turns that ended
 * before any model request reached the model (interrupted before it, or the
 * request failed), so the model has still not read the tool output and the
 * recovery note is still owed (issue 16, defect 3). Whether a request carrying
 * the note was accepted is the session's acknowledged key, not this shape.
 */
export function findToolTail(messages: readonly TranscriptMessageLike[]): ToolTail | null {
  let end = messages.length;
  while (end > 0 && messages[end - 1]?.role === 'user') end--;
  let start = end;
  while (start > 0 && messages[start - 1]?.role === 'tool') start--;
  if (start === end) return null;
  const before = messages[start - 1];
  if (!before || before.role !== 'assistant' || !before.toolCalls || before.toolCalls.length === 0) return null;
  const hash = createHash('sha256');
  for (const message of messages.slice(start, end)) {
    const contentHash = createHash('sha256').update(message.content).digest('hex');
    hash.update(`${message.toolCallId ?? ''}\u0000${message.toolName ?? ''}\u0000${contentHash}\u0001`);
  }
  return { start, count: end - start, key: hash.digest('hex') };
}
