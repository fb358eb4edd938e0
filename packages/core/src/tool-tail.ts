import { createHash } from 'node:crypto';

export interface TranscriptMessageLike {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  toolCallId?: string | null;
  toolName?: string | null;
  toolCalls?: unknown[] | null;
}

export interface ToolTail {
  /** The trailing tool messages, in order. */
  count: number;
  /** Hash over each tool message's call id, tool name and content hash, in order (DESIGN §7). */
  key: string;
}

/**
 * The tool tail of a session: its trailing run of tool messages after an
 * assistant message with tool_calls, with no assistant message after them —
 * tool output the model never got to read. Null when the session does not
 * end that way.
 */
export function findToolTail(messages: readonly TranscriptMessageLike[]): ToolTail | null {
  let start = messages.length;
  while (start > 0 && messages[start - 1]?.role === 'tool') start--;
  if (start === messages.length) return null;
  const before = messages[start - 1];
  if (!before || before.role !== 'assistant' || !before.toolCalls || before.toolCalls.length === 0) return null;
  const hash = createHash('sha256');
  for (const message of messages.slice(start)) {
    const contentHash = createHash('sha256').update(message.content).digest('hex');
    hash.update(`${message.toolCallId ?? ''}\u0000${message.toolName ?? ''}\u0000${contentHash}\u0001`);
  }
  return { count: messages.length - start, key: hash.digest('hex') };
}
