import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { MessageRow } from '@switchboard/db';

/**
 * Stored transcript → chat-completions messages, in session order. API-only
 * notes go between the history and the new input, as system messages: the
 * model reads them right before the user's words, and they exist only in
 * this request.
 */
export function buildModelMessages(systemPrompt: string, history: readonly MessageRow[], apiOnlyNotes: string[], newUserTexts: string[]): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: systemPrompt }];
  for (const row of history) messages.push(toModelMessage(row));
  for (const note of apiOnlyNotes) messages.push({ role: 'system', content: note });
  for (const text of newUserTexts) messages.push({ role: 'user', content: text });
  return messages;
}

function toModelMessage(row: MessageRow): ChatCompletionMessageParam {
  // A summary opens a child session; it is the gateway's account of earlier messages, not something anyone said.
  if (row.kind === 'summary') return { role: 'system', content: `Summary of the earlier conversation (written by the gateway):\n${row.content}` };
  if (row.role === 'tool') return { role: 'tool', tool_call_id: row.toolCallId ?? '', content: row.content };
  if (row.role === 'assistant') {
    const toolCalls = row.toolCalls ?? [];
    return toolCalls.length > 0
      ? {
          role: 'assistant',
          content: row.content || null,
          tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
        }
      : { role: 'assistant', content: row.content };
  }
  return { role: 'user', content: row.content };
}
