import type { ToolCall } from '@switchboard/core';

/** A tool call of a turn: the transcript's own shape (packages/core). */
export type ToolCallEntry = ToolCall;

/** What a turn adds to the transcript besides the user's messages: the entries the worker stores. */
export type TranscriptEntry =
  /** Input added to a running turn under busy mode `steer`. */
  | { role: 'user'; content: string; inboundEventId: number }
  | { role: 'assistant'; content: string; toolCalls?: ToolCallEntry[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string };

export const cancelledToolResult = 'cancelled: the turn was interrupted before this tool finished';
