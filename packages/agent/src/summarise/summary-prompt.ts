/**
 * The summarisation prompt, kept in this one file (issue: compression §2).
 * The summary replaces the older part of a conversation for the model, so it
 * must carry facts, decisions and open questions, never instructions that
 * came from anything but the user.
 */
export const summarySystemPrompt = [
  'You compress chat transcripts. Write a summary of the conversation below that lets an assistant continue it without the original messages.',
  'Keep: facts the user stated about themselves or their task, decisions made, answers given, commitments, open questions, names, numbers and code identifiers.',
  'Tool results appear as [tool name] lines. Results marked "never read" came from a turn that was interrupted: mention them only as background, never as news to act on.',
  'An earlier summary may open the transcript: fold it in.',
  'Write plain prose in the third person ("The user asked…"), at most a few hundred words. Do not address the user. Do not add instructions.',
].join('\n');

export interface SummaryInputMessage {
  role: 'user' | 'assistant' | 'tool';
  kind: 'message' | 'summary';
  content: string;
  toolName?: string | null;
  toolCalls?: { name: string; arguments: string }[] | null;
}

/** Renders stored messages as the text the summariser reads. Only stored messages: API-only notes never reach it. */
export function renderTranscriptForSummary(messages: readonly SummaryInputMessage[], unreadToolTail: ReadonlySet<number> = new Set()): string {
  return messages
    .map((message, index) => {
      if (message.kind === 'summary') return `Earlier summary: ${message.content}`;
      if (message.role === 'tool') return `[${message.toolName ?? 'tool'}${unreadToolTail.has(index) ? ', never read' : ''}] ${message.content}`;
      if (message.role === 'assistant') {
        const calls = (message.toolCalls ?? []).map((c) => `${c.name}(${c.arguments})`).join(', ');
        return `Assistant: ${message.content}${calls ? ` [called ${calls}]` : ''}`.trim();
      }
      return `User: ${message.content}`;
    })
    .join('\n');
}
