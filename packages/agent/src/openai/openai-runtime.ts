import { randomBytes } from 'node:crypto';
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { AgentError } from '../agent-error.ts';
import type { AgentRuntime, RunTurnRequest, RunTurnResult, TurnFailure } from '../agent-runtime.ts';
import type { ToolContext, ToolDefinition, TurnWaitBudget } from '../tools/define-tool.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { cancelledToolResult, type ToolCallEntry, type TranscriptEntry } from '../transcript-entry.ts';
import { retryModelRequest, type ModelRetry, type ModelRetryPolicy } from './model-retry.ts';
import { createOpenAiConversation, readStreamedStep, toOpenAiTools, type StreamedStep } from './openai-messages.ts';

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

/** What one model request needs besides its messages. */
interface StepSettings {
  client: OpenAI;
  options: OpenAiRuntimeOptions;
  retry: ModelRetryPolicy;
  /** The tools offered now, and their schemas' text (read once at a turn's start, and by the worker's token estimate). */
  offer(): ToolOffer;
}

/** The turn's offer, read once at its start: an MCP server's list change reaches the next turn, never half of one. */
type TurnTools = ReturnType<typeof toOpenAiTools>;

interface ToolOffer {
  definitions: ToolDefinition[];
  tools: TurnTools;
  text: string;
}

/**
 * The offer, built again only when the registry hands out another list: the
 * built-in tools' list never changes, so an ordinary turn builds nothing and
 * serialises nothing (the worker reads `fixedRequestText` several times a turn).
 */
function createToolOffer(registry: OpenAiRuntimeOptions['tools']): () => ToolOffer {
  let offered: ToolOffer | undefined;
  return () => {
    const definitions = registry.definitions;
    if (offered?.definitions !== definitions) {
      const tools = toOpenAiTools(definitions);
      offered = { definitions, tools, text: JSON.stringify(tools) };
    }
    return offered;
  };
}

/** Chat-completions agent loop: model → tool calls → tool results → model, streaming, abortable. `askUser` is never called. */
export function createOpenAiRuntime(options: OpenAiRuntimeOptions): AgentRuntime {
  // The SDK's own fetch: a hand-written undici adapter here (0.3 ms faster a
  // request) threw an uncaught ERR_INVALID_STATE on Node 20 when the SDK
  // cancelled a 429's body to retry (nodejs/node#54205), which took the whole
  // worker down (issue 16). The SDK does not retry: model-retry.ts does, abortably.
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, timeout: options.timeoutMs, maxRetries: 0 });
  const retry: ModelRetryPolicy = { maxRetries: options.retry?.maxRetries ?? 2, maxWaitMs: options.retry?.maxWaitMs ?? 30_000 };
  const settings: StepSettings = { client, options, retry, offer: createToolOffer(options.tools) };
  return {
    get fixedRequestText() {
      return settings.offer().text;
    },
    runTurn: (request) => runOpenAiTurn(settings, request),
  };
}

async function runOpenAiTurn(settings: StepSettings, request: RunTurnRequest): Promise<RunTurnResult> {
  const { options } = settings;
  const entries: TranscriptEntry[] = [];
  const conversation = createOpenAiConversation(request);
  let toolIterations = 0;
  const interrupted = (): RunTurnResult => ({ outcome: 'interrupted', entries, toolIterations });
  // One per turn, shared by its tool calls: what one call waited, the next cannot.
  const waitBudget: TurnWaitBudget = { budgetMs: options.turnWaitBudgetMs ?? Number.POSITIVE_INFINITY, spentMs: 0 };
  const { tools } = settings.offer();

  for (let iteration = 0; iteration < options.maxToolIterations; iteration++) {
    if (request.signal.aborted) return interrupted();
    if (iteration > 0 && request.takeSteerInput) {
      for (const input of await request.takeSteerInput()) {
        const entry: TranscriptEntry = { role: 'user', content: input.text, inboundEventId: input.inboundEventId };
        entries.push(entry);
        conversation.add(entry);
      }
    }

    let step: StreamedStep;
    try {
      step = await streamOneStep(settings, { messages: conversation.messages(), tools }, request, iteration);
      if (iteration === 0) conversation.dropNotes();
    } catch (error) {
      if (request.signal.aborted || error instanceof APIUserAbortError) return interrupted();
      return { outcome: 'failed', failure: toTurnFailure(error), entries, toolIterations };
    }

    if (step.toolCalls.length === 0) {
      entries.push({ role: 'assistant', content: step.content });
      return { outcome: 'completed', entries, text: step.content, toolIterations };
    }

    toolIterations++;
    const assistant: TranscriptEntry = { role: 'assistant', content: step.content, toolCalls: step.toolCalls };
    entries.push(assistant);
    conversation.add(assistant);
    for (const call of step.toolCalls) {
      const entry = await runToolCall(options, call, { signal: request.signal, waitBudget, ...(request.caller ? { caller: request.caller } : {}), ...(request.askUser ? { askUser: request.askUser } : {}) });
      entries.push(entry);
      conversation.add(entry);
    }
  }
  const text = `I stopped after ${options.maxToolIterations} tool steps without a final answer.`;
  entries.push({ role: 'assistant', content: text });
  return { outcome: 'completed', entries, text, toolIterations };
}

/**
 * A tool not yet started when the turn is stopped is never started, but
 * still gets a stored result so every tool_call_id has its answer
 * (docs/turns.md, "Busy input modes").
 */
async function runToolCall(options: OpenAiRuntimeOptions, call: ToolCallEntry, context: ToolContext): Promise<TranscriptEntry> {
  const { signal } = context;
  let content: string;
  if (signal.aborted) content = cancelledToolResult;
  else {
    try {
      content = await options.tools.call(call.name, call.arguments, context);
    } catch {
      content = cancelledToolResult;
    }
  }
  return { role: 'tool', toolCallId: call.id, toolName: call.name, content };
}

async function streamOneStep(settings: StepSettings, { messages, tools }: { messages: ChatCompletionMessageParam[]; tools: TurnTools }, request: RunTurnRequest, iteration: number): Promise<StreamedStep> {
  const { client, options, retry } = settings;
  const body = {
    model: options.model,
    messages,
    stream: true as const,
    ...(tools.length > 0 ? { tools } : {}),
  };
  // Only the request is retried, never a stream that has begun: its text may already be half read.
  const stream = await retryModelRequest(() => client.chat.completions.create(body, { signal: request.signal }), retry, request.signal, options.onRetry);
  if (iteration === 0) await request.onModelAccepted?.();
  // Each step starts from '': the text of a step that ends in tool calls is not the answer.
  request.onText?.('');
  const step = await readStreamedStep(stream, request.onText);
  if (request.signal.aborted) throw new APIUserAbortError();
  return { content: step.content, toolCalls: assignToolCallIds(step.toolCalls) };
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

function toTurnFailure(error: unknown): TurnFailure {
  if (error instanceof AgentError) return { code: error.code, message: error.message, cause: error };
  if (error instanceof APIConnectionTimeoutError) return { code: 'MODEL_TIMEOUT', message: 'the model did not answer in time', cause: error };
  if (error instanceof APIError && error.status === 429) return { code: 'MODEL_RATE_LIMITED', message: 'the model is rate limited', cause: error };
  const status = error instanceof APIError ? ` (${error.status ?? 'network'})` : '';
  return { code: 'MODEL_FAILED', message: `model request failed${status}`, cause: error };
}
