import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { movesToNextModel, planModelOrder, type ChosenModel, type ModelFailureKind } from '@switchboard/core';
import type { AgentRuntime, RunTurnRequest, RunTurnResult } from '../agent-runtime.ts';
import { createOpenAiRuntime, type OpenAiRuntimeOptions } from './openai-runtime.ts';

/** One OpenAI-compatible endpoint: the primary (MODEL_BASE_URL) or one of MODEL_FALLBACKS. */
export interface ModelEndpoint {
  baseURL: string;
  apiKey: string;
  model: string;
}

export interface FallbackRuntimeOptions extends Omit<OpenAiRuntimeOptions, 'baseURL' | 'apiKey' | 'model'> {
  /** The primary first, then the fallbacks in the order they are tried. */
  endpoints: readonly ModelEndpoint[];
  /** How long an endpoint that failed goes to the back of the order. */
  cooldownMs: number;
  /** Told when a turn moves from one model to the next, for logs and metrics. */
  onFallback?: (move: { from: string; to: string; status: number | undefined }) => void;
  now?: () => number;
}

/** The OpenAI runtime over the configured endpoints, and the same for a conversation whose operator chose a model. */
export interface FallbackRuntime extends AgentRuntime {
  /**
   * The runtime for a conversation's chosen model (`conversations.model`):
   * that model first, alone unless `fallback` (`planModelOrder`). null: this
   * runtime itself. `not_configured` when no endpoint serves that model name.
   */
  withModel(chosen: ChosenModel | null): { kind: 'ready'; runtime: AgentRuntime } | { kind: 'not_configured'; model: string };
}

/**
 * An AgentRuntime over several OpenAI-compatible endpoints (docs/turns.md,
 * "Model fallbacks"). Each turn tries them in `orderModelEndpoints` order; a
 * failure that `movesToNextModel` (429, 5xx, timeout, lost connection) sends
 * the same request to the next one and cools the failed one down. The
 * cooldowns live in this object, so per worker process.
 *
 * Retries: an endpoint with another one after it is tried once (moving on is
 * the retry, and quicker than a backoff); the last one in the order gets the
 * configured retries, as a single model always did.
 *
 * Only a turn that failed before it added anything moves on: its entries are
 * empty, so no tool ran and no text of the failed stream was kept (a stream
 * that breaks mid-answer drops its half-read text). A turn that failed after
 * a tool step keeps its failure rather than run the tools again elsewhere.
 */
export function createFallbackRuntime(options: FallbackRuntimeOptions): FallbackRuntime {
  const { endpoints, cooldownMs, onFallback, now = Date.now, ...shared } = options;
  const build = (endpoint: ModelEndpoint, retry: OpenAiRuntimeOptions['retry']) =>
    createOpenAiRuntime({ ...shared, baseURL: endpoint.baseURL, apiKey: endpoint.apiKey, model: endpoint.model, retry });
  const runtimes = endpoints.map((endpoint) => ({ quick: build(endpoint, { ...shared.retry, maxRetries: 0 }), last: build(endpoint, shared.retry) }));
  const cooldownUntil = new Map<number, number>();
  const first = runtimes[0];
  if (!first) throw new Error('createFallbackRuntime needs at least one endpoint');

  const models = endpoints.map((endpoint) => endpoint.model);

  /** One turn over the endpoints in `order`: each failure that moves on cools its endpoint down and asks the next. */
  async function runInOrder(request: RunTurnRequest, order: number[]): Promise<RunTurnResult> {
    const once = acceptOnce(request);
    let result: RunTurnResult | undefined;
    for (const [position, index] of order.entries()) {
      const isLast = position === order.length - 1;
      const runtime = isLast ? runtimes[index]?.last : runtimes[index]?.quick;
      const model = endpoints[index]?.model ?? '';
      if (!runtime) break;
      result = { ...(await runtime.runTurn(once)), model };
      if (result.outcome !== 'failed' || result.entries.length > 0) return result;
      const kind = failureKindOf(result.failure.cause);
      if (!movesToNextModel(kind)) return result;
      cooldownUntil.set(index, now() + cooldownMs);
      const next = order[position + 1];
      if (next !== undefined) onFallback?.({ from: model, to: endpoints[next]?.model ?? '', status: kind.kind === 'status' ? kind.status : undefined });
    }
    return result as RunTurnResult;
  }

  /** A runtime whose order is planned at each turn, so the cooldowns are those of that moment. */
  const runtimeOf = (chosen: ChosenModel | null): AgentRuntime => ({
    get fixedRequestText() {
      return first.last.fixedRequestText;
    },
    async runTurn(request) {
      const plan = planModelOrder(models, cooldownUntil, now(), chosen);
      // Checked by withModel before this runtime exists; the list of endpoints never changes.
      if (plan.kind !== 'ordered') throw new Error(`no configured endpoint serves the model ${plan.model}`);
      return runInOrder(request, plan.order);
    },
  });

  const unchosen = runtimeOf(null);
  return {
    runTurn: unchosen.runTurn,
    // A getter, not a copy: the tools offered may change between turns (MCP servers).
    get fixedRequestText() {
      return unchosen.fixedRequestText;
    },
    withModel(chosen) {
      if (!chosen) return { kind: 'ready', runtime: unchosen };
      const plan = planModelOrder(models, cooldownUntil, now(), chosen);
      return plan.kind === 'ordered' ? { kind: 'ready', runtime: runtimeOf(chosen) } : plan;
    },
  };
}

/** The request as each endpoint gets it: `onModelAccepted` is called once for the turn, whichever model accepts. */
function acceptOnce(request: RunTurnRequest): RunTurnRequest {
  if (!request.onModelAccepted) return request;
  const accept = request.onModelAccepted;
  let accepted: Promise<void> | undefined;
  return { ...request, onModelAccepted: () => (accepted ??= Promise.resolve(accept())) };
}

/** The SDK's error, in the words of the core rule. */
export function failureKindOf(cause: unknown): ModelFailureKind {
  if (cause instanceof APIUserAbortError) return { kind: 'aborted' };
  if (cause instanceof APIConnectionTimeoutError) return { kind: 'timeout' };
  if (cause instanceof APIConnectionError) return { kind: 'connection' };
  if (cause instanceof APIError && cause.status !== undefined) return { kind: 'status', status: cause.status };
  return isBrokenStream(cause) ? { kind: 'connection' } : { kind: 'other' };
}

const socketCodes = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE']);

/**
 * A stream whose connection broke after the answer began reaches us as fetch's
 * `TypeError: terminated`, not an SDK error: its cause carries undici's
 * socket code. That is a lost connection like any other.
 */
function isBrokenStream(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('UND_ERR_') || socketCodes.has(code))) return true;
  }
  return false;
}
