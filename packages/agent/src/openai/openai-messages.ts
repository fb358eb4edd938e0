import type { ChatCompletionChunk, ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ToolCall, TranscriptMessage } from '@switchboard/core';
import { AgentError } from '../agent-error.ts';
import type { InputImage, RunTurnRequest } from '../agent-runtime.ts';
import type { ToolDefinition } from '../tools/define-tool.ts';

/**
 * The one place where the project's words become chat-completions messages
 * and back (README.md, "The OpenAI runtime's edge").
 */

/**
 * A turn's request messages, in the order the model reads them: the
 * instructions, the stored history, the API-only notes (as system messages,
 * right before the user's words), the input, then what the turn added (tool
 * calls, tool results, steered input). The notes are kept apart so the turn's
 * follow-up requests can leave them out without matching text.
 */
export interface OpenAiConversation {
  /** The messages of the next request. */
  messages(): ChatCompletionMessageParam[];
  /** Appends what the turn added, in order. */
  add(message: TranscriptMessage): void;
  /** The notes reached the model: later requests leave them out. */
  dropNotes(): void;
}

export function createOpenAiConversation(request: Pick<RunTurnRequest, 'instructions' | 'history' | 'notes' | 'input' | 'inputImages'>): OpenAiConversation {
  const head: ChatCompletionMessageParam[] = [{ role: 'system', content: request.instructions }, ...request.history.map(toOpenAiMessage)];
  let notes: ChatCompletionMessageParam[] = request.notes.map((note) => ({ role: 'system', content: note }));
  const turn: ChatCompletionMessageParam[] = request.input.map((text, i) => toOpenAiInput(text, request.inputImages?.[i] ?? []));
  return {
    messages: () => [...head, ...notes, ...turn],
    add: (message) => void turn.push(toOpenAiMessage(message)),
    dropNotes: () => void (notes = []),
  };
}

/** A user input of this turn: plain text, or text and image parts (the chat-completions vision shape). */
function toOpenAiInput(text: string, images: readonly InputImage[]): ChatCompletionMessageParam {
  if (images.length === 0) return { role: 'user', content: text };
  return { role: 'user', content: [{ type: 'text', text }, ...images.map((image) => ({ type: 'image_url' as const, image_url: { url: image.dataUrl } }))] };
}

/** A transcript message (stored, or added by this turn) as the model reads it: the one tool-call mapping. */
export function toOpenAiMessage(message: TranscriptMessage): ChatCompletionMessageParam {
  // A summary opens a child session; it is the gateway's account of earlier messages, not something anyone said.
  if (message.kind === 'summary') return { role: 'system', content: `Summary of the earlier conversation (written by the gateway):\n${message.content}` };
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content };
  if (message.role === 'assistant') {
    const toolCalls = message.toolCalls ?? [];
    return toolCalls.length > 0
      ? {
          role: 'assistant',
          content: message.content || null,
          tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
        }
      : { role: 'assistant', content: message.content };
  }
  return { role: 'user', content: message.content };
}

/** The `tools` entries of a request. */
export function toOpenAiTools(definitions: readonly ToolDefinition[]): ChatCompletionFunctionTool[] {
  return definitions.map((d) => ({ type: 'function', function: { name: d.name, description: d.description, parameters: d.parameters } }));
}

/** One model step as read from its stream: the text and the tool calls (ids as the model gave them, '' when it gave none). */
export interface StreamedStep {
  content: string;
  toolCalls: ToolCall[];
}

/** Reads a streamed answer back into the project's words; a refusal throws MODEL_REFUSED. */
export async function readStreamedStep(stream: AsyncIterable<ChatCompletionChunk>, onText?: (text: string) => void): Promise<StreamedStep> {
  let content = '';
  const calls: ToolCall[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.refusal) throw new AgentError('MODEL_REFUSED', 'the model refused the request');
    if (delta.content) {
      content += delta.content;
      onText?.(content);
    }
    for (const call of delta.tool_calls ?? []) {
      const slot = (calls[call.index] ??= { id: '', name: '', arguments: '' });
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.name += call.function.name;
      if (call.function?.arguments) slot.arguments += call.function.arguments;
    }
  }
  return { content, toolCalls: calls.filter(Boolean) };
}
