export interface ToolCallEntry {
  id: string;
  name: string;
  arguments: string;
}

/** What a turn adds to the transcript besides the user's messages. */
export type TranscriptEntry =
  /** Input added to a running turn under busy mode `steer`. */
  | { role: 'user'; content: string; inboundEventId: number }
  | { role: 'assistant'; content: string; toolCalls?: ToolCallEntry[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string };

export const cancelledToolResult = 'cancelled: the turn was interrupted before this tool finished';
