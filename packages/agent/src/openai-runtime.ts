import { randomBytes } from 'node:crypto';
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { AgentError } from './agent-error.ts';
import { retryModelRequest, type ModelRetry, type ModelRetryPolicy } from './model-retry.ts';
import type { TurnWaitBudget } from './tools/define-tool.ts';
import type { ToolRegistry } from './tools/tool-registry.ts';
import { cancelledToolResult, type ToolCallEntry, type TranscriptEntry } from './transcript-entry.ts';

export interface OpenAiRuntimeOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  maxToolIterations: number;
  tools: ToolRegistry;
  /** What all waiting tool calls of one turn may wait together, ms (TURN_WAIT_BUDGET_SECONDS); default: no turn budget. */
  turnWaitBudgetMs?: number;
  /** 429, 5xx and lost connections are retried this way (model-retry.ts); default: 2 retries, 30 s longest wait. */
  retry?: Partial<ModelRetryPolicy>;
  /** Told before each retry's wait, for logs and metrics. */
  onRetry?: (retry: ModelRetry) => void;
}

export interface RunTurnRequest {
  messages: ChatCompletionMessageParam[];
  signal: AbortSignal;
  /** Called once a model request was accepted (response started): the point where API-only notes count as delivered. */
  onModelAccepted?: (iteration: number) => void | Promise<void>;
  /**
   * API-only notes among `messages` that must reach the model once: after the
   * first request is accepted they are left out of the turn's follow-up requests.
   */
  oneShotNotes?: readonly string[];
  /** Called before each follow-up model call; returns user input to add to the running turn (busy mode steer). */
  takeSteerInput?: () => Promise<{ text: string; inboundEventId: number }[]>;
}

export interface RunTurnResult {
  outcome: 'completed' | 'interrupted';
  entries: TranscriptEntry[];
  /** The final assistant text ('' when the model answered nothing). */
  text: string;
}

export interface AgentRuntime {
  runTurn(request: RunTurnRequest): Promise<RunTurnResult>;
}

/** Chat-completions agent loop: model → tool calls → tool results → model, streaming, abortable. */
export function createOpenAiRuntime(options: OpenAiRuntimeOptions): AgentRuntime {
  // The SDK's own fetch: a hand-written undici adapter here (0.3 ms faster a
  // request) threw an uncaught ERR_INVALID_STATE on Node 20 when the SDK
  // cancelled a 429's body to retry (nodejs/node#54205), which took the whole
  // worker down (issue 16). The SDK does not retry: model-retry.ts does, abortably.
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, timeout: options.timeoutMs, maxRetries: 0 });
  const retry: ModelRetryPolicy = { maxRetries: options.retry?.maxRetries ?? 2, maxWaitMs: options.retry?.maxWaitMs ?? 30_000 };

  return {
    async runTurn(request) {
      const entries: TranscriptEntry[] = [];
      let messages = [...request.messages];
      const oneShot = new Set(request.oneShotNotes ?? []);
      const interrupted = (): RunTurnResult => ({ outcome: 'interrupted', entries, text: '' });
      // One per turn, shared by its tool calls: what one call waited, the next cannot.
      const waitBudget: TurnWaitBudget = { budgetMs: options.turnWaitBudgetMs ?? Number.POSITIVE_INFINITY, spentMs: 0 };

      for (let iteration = 0; iteration < options.maxToolIterations; iteration++) {
        if (request.signal.aborted) return interrupted();
        if (iteration > 0 && request.takeSteerInput) {
          for (const input of await request.takeSteerInput()) {
            entries.push({ role: 'user', content: input.text, inboundEventId: input.inboundEventId });
            messages.push({ role: 'user', content: input.text });
          }
        }

        let step: { content: string; toolCalls: ToolCallEntry[] };
        try {
          step = await streamOneStep(client, options, retry, messages, request, iteration);
          if (iteration === 0 && oneShot.size > 0) messages = messages.filter((m) => !(m.role === 'system' && typeof m.content === 'string' && oneShot.has(m.content)));
        } catch (error) {
          if (request.signal.aborted || error instanceof APIUserAbortError) return interrupted();
          throw toAgentError(error, entries);
        }

        if (step.toolCalls.length === 0) {
          entries.push({ role: 'assistant', content: step.content });
          return { outcome: 'completed', entries, text: step.content };
        }

        const assistant: TranscriptEntry = { role: 'assistant', content: step.content, toolCalls: step.toolCalls };
        entries.push(assistant);
        messages.push(toAssistantParam(step.content, step.toolCalls));
        for (const call of step.toolCalls) {
          // A tool not yet started when the turn is stopped is never started,
          // but still gets a stored result so every tool_call_id has its answer (docs/turns.md, "Busy input modes").
          let content: string;
          if (request.signal.aborted) content = cancelledToolResult;
          else {
            try {
              content = await options.tools.call(call.name, call.arguments, { signal: request.signal, waitBudget });
            } catch {
              content = cancelledToolResult;
            }
          }
          entries.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content });
          messages.push({ role: 'tool', tool_call_id: call.id, content });
        }
      }
      const text = `I stopped after ${options.maxToolIterations} tool steps without a final answer.`;
      entries.push({ role: 'assistant', content: text });
      return { outcome: 'completed', entries, text };
    },
  };
}

async function streamOneStep(
  client: OpenAI,
  options: OpenAiRuntimeOptions,
  retry: ModelRetryPolicy,
  messages: ChatCompletionMessageParam[],
  request: RunTurnRequest,
  iteration: number,
): Promise<{ content: string; toolCalls: ToolCallEntry[] }> {
  const body = {
    model: options.model,
    messages,
    stream: true as const,
    ...(options.tools.definitions.length > 0 ? { tools: options.tools.definitions } : {}),
  };
  // Only the request is retried, never a stream that has begun: its text may already be half read.
  const stream = await retryModelRequest(() => client.chat.completions.create(body, { signal: request.signal }), retry, request.signal, options.onRetry);
  await request.onModelAccepted?.(iteration);
  let content = '';
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.refusal) throw new AgentError('MODEL_REFUSED', 'the model refused the request', []);
    if (delta.content) content += delta.content;
    for (const call of delta.tool_calls ?? []) {
      const slot = (calls[call.index] ??= { id: '', name: '', arguments: '' });
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.name += call.function.name;
      if (call.function?.arguments) slot.arguments += call.function.arguments;
    }
  }
  if (request.signal.aborted) throw new APIUserAbortError();
  return { content, toolCalls: assignToolCallIds(calls.filter(Boolean)) };
}

/**
 * Keeps the ids the model gave and makes one up for a call that came without.
 * A made-up id is random, never derived from the step or the call's position:
 * the recovery note is keyed by the tool tail's ids, and `call_0_0` in every
 * turn made two identical cut tails share a key, so the second got no note (issue 16).
 */
export function assignToolCallIds<T extends { id: string }>(calls: T[]): T[] {
  return calls.map((call) => (call.id ? call : { ...call, id: `call_${randomBytes(12).toString('hex')}` }));
}

function toAssistantParam(content: string, toolCalls: ToolCallEntry[]): ChatCompletionMessageParam {
  return {
    role: 'assistant',
    content: content || null,
    tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
  };
}

function toAgentError(error: unknown, entries: TranscriptEntry[]): AgentError {
  if (error instanceof AgentError) return new AgentError(error.code, error.message, entries, error);
  if (error instanceof APIConnectionTimeoutError) return new AgentError('MODEL_TIMEOUT', 'the model did not answer in time', entries, error);
  if (error instanceof APIError && error.status === 429) return new AgentError('MODEL_RATE_LIMITED', 'the model is rate limited', entries, error);
  const status = error instanceof APIError ? ` (${error.status ?? 'network'})` : '';
  return new AgentError('MODEL_FAILED', `model request failed${status}`, entries, error);
}
