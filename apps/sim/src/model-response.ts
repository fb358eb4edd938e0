import { randomBytes } from 'node:crypto';
import { contentText, type ReplyPlan } from './model-script.ts';

/**
 * OpenAI Chat Completions wire objects (non-streaming `chat.completion`,
 * streaming `chat.completion.chunk`, `{error}`), shaped as the API documents
 * them so the official SDK and its stream helpers accept them unchanged.
 */

export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export function createMeta(model: unknown): CompletionMeta {
  return {
    id: `chatcmpl-${randomBytes(18).toString('base64url')}`,
    created: Math.floor(Date.now() / 1000),
    model: typeof model === 'string' && model !== '' ? model : 'switchboard-sim',
  };
}

// Token counts are estimates (4 characters a token): good enough for the
// worker's budget arithmetic, and deterministic, which a tokenizer is not across models.
const estimateTokens = (characters: number) => Math.ceil(characters / 4);

export function estimateUsage(messages: unknown[], plan: ReplyPlan): Usage {
  let promptCharacters = 0;
  for (const message of messages) {
    const entry = message as { content?: unknown; tool_calls?: unknown } | null;
    promptCharacters += contentText(entry?.content).length;
    if (Array.isArray(entry?.tool_calls)) promptCharacters += JSON.stringify(entry.tool_calls).length;
  }
  const completionCharacters = plan.content.length + plan.toolCalls.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0);
  const prompt_tokens = estimateTokens(promptCharacters);
  const completion_tokens = estimateTokens(completionCharacters);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

const finishReasonOf = (plan: ReplyPlan) => (plan.toolCalls.length > 0 ? 'tool_calls' : 'stop');

export function buildCompletion(meta: CompletionMeta, plan: ReplyPlan, usage: Usage): unknown {
  const toolCalls = plan.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          // OpenAI sends null content on a pure tool-call answer.
          content: plan.content === '' && toolCalls.length > 0 ? null : plan.content,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finishReasonOf(plan),
        logprobs: null,
      },
    ],
    usage,
  };
}

/**
 * The streamed answer, chunk by chunk: the role delta, content in `chunkSize`
 * pieces, each tool call opened with its id and name and then its arguments in
 * pieces, the finish chunk, and a usage chunk when asked for.
 */
export function* buildChunks(meta: CompletionMeta, plan: ReplyPlan, usage: Usage, includeUsage: boolean): Generator<unknown> {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage ? { usage: null } : {}),
  });

  yield chunk({ role: 'assistant', content: '', refusal: null });
  for (const piece of splitEvery(plan.content, plan.chunkSize)) yield chunk({ content: piece });
  for (const [index, call] of plan.toolCalls.entries()) {
    yield chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
    for (const piece of splitEvery(call.arguments, plan.chunkSize)) yield chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
  }
  yield chunk({}, finishReasonOf(plan));
  if (includeUsage) {
    yield { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, system_fingerprint: null, choices: [], usage };
  }
}

// Splits by code point so a chunk boundary never cuts a surrogate pair.
function splitEvery(text: string, size: number): string[] {
  const characters = Array.from(text);
  const pieces: string[] = [];
  for (let index = 0; index < characters.length; index += size) pieces.push(characters.slice(index, index + size).join(''));
  return pieces;
}

export function buildError(message: string, type: string, code: string | null, param: string | null = null): unknown {
  return { error: { message, type, param, code } };
}

/** Minimal request validation, in OpenAI's words; undefined when the request is usable. */
export function findRequestProblem(body: unknown): { message: string; param: string | null; code: string | null } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return {
      message: 'We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.',
      param: null,
      code: null,
    };
  }
  const messages = (body as { messages?: unknown }).messages;
  if (messages === undefined) return { message: "Missing required parameter: 'messages'.", param: 'messages', code: 'missing_required_parameter' };
  if (!Array.isArray(messages)) {
    return { message: "Invalid type for 'messages': expected an array of objects.", param: 'messages', code: 'invalid_type' };
  }
  if (messages.length === 0) {
    return {
      message: "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      param: 'messages',
      code: 'empty_array',
    };
  }
  const badIndex = messages.findIndex((message) => typeof (message as { role?: unknown } | null)?.role !== 'string');
  if (badIndex >= 0) {
    return { message: `Missing required parameter: 'messages[${badIndex}].role'.`, param: `messages[${badIndex}].role`, code: 'missing_required_parameter' };
  }
  return undefined;
}
