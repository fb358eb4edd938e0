/** A tool call as the transcript keeps it: the model's id, the tool's name, the arguments as the model wrote them (JSON text). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * A message of the conversation as it is stored (packages/db's message rows
 * fit this shape), in the project's words: what a runtime reads as history.
 * API-only notes are never among these. `kind: 'summary'` opens a child
 * session after compression: the gateway's account of earlier messages, not
 * something anyone said.
 */
export interface TranscriptMessage {
  role: 'user' | 'assistant' | 'tool';
  kind?: 'message' | 'summary';
  content: string;
  /** An assistant message's tool calls (none: a plain answer). */
  toolCalls?: readonly ToolCall[] | null;
  /** A tool message's answer to this call id. */
  toolCallId?: string | null;
  toolName?: string | null;
}
