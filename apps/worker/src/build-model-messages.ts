import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { MessageRow } from '@switchboard/db';

/** Stored transcript → chat-completions messages, in session order. */
export function buildModelMessages(systemPrompt: string, history: MessageRow[], newUserTexts: string[]): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: systemPrompt }];
  for (const row of history) messages.push(toModelMessage(row));
  for (const text of newUserTexts) messages.push({ role: 'user', content: text });
  return messages;
}

function toModelMessage(row: MessageRow): ChatCompletionMessageParam {
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
