export interface ToolCallEntry {
  id: string;
  name: string;
  arguments: string;
}

/** What a turn adds to the transcript besides the user's messages. */
export type TranscriptEntry =
  | { role: 'assistant'; content: string; toolCalls?: ToolCallEntry[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string };

export const cancelledToolResult = 'cancelled: the turn was interrupted before this tool finished';
