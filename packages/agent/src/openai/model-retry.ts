import { setTimeout as sleep } from 'node:timers/promises';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

export interface ModelRetryPolicy {
  /** Retries after the first try (0 = one try only). */
  maxRetries: number;
  /** The longest wait before a retry that a turn affords; a model asking for more is not retried. */
  maxWaitMs: number;
}

/** One retry about to wait: the failed answer's status (undefined: no answer) and the wait. */
export interface ModelRetry {
  status: number | undefined;
  waitMs: number;
  /** Retries made before this one. */
  retries: number;
}

/**
 * Runs `send` until it succeeds, retrying as `findRetryDelayMs` says; the last
 * error is thrown as it came. An abort of `signal` during a wait rejects at
 * once (with an AbortError), so an interrupted turn never waits out a backoff.
 */
export async function retryModelRequest<T>(send: () => Promise<T>, policy: ModelRetryPolicy, signal: AbortSignal, onRetry?: (retry: ModelRetry) => void): Promise<T> {
  for (let retries = 0; ; retries++) {
    try {
      return await send();
    } catch (error) {
      const waitMs = findRetryDelayMs(error, retries, policy);
      if (waitMs === undefined || signal.aborted) throw error;
      onRetry?.({ status: error instanceof APIError ? error.status : undefined, waitMs, retries });
      await sleep(waitMs, undefined, { signal });
    }
  }
}

/**
 * How long to wait before retrying a model request that failed with `error`
 * (`retries` = retries already made), or undefined when it must not be retried.
 *
 * Retried as the OpenAI SDK would: 408, 409, 429 and 5xx answers and lost
 * connections, honouring `x-should-retry`, then `retry-after-ms`, then
 * `Retry-After` (seconds or an HTTP date), else exponential backoff with
 * jitter. Done here rather than by the SDK because the SDK v6 sleeps out any
 * `Retry-After` however long (an hour holds the conversation an hour) and its
 * sleep ignores the request's abort signal, so /stop or new input would wait
 * out the backoff. A timeout is not retried: it has already cost the turn
 * MODEL_TIMEOUT_MS.
 */
export function findRetryDelayMs(error: unknown, retries: number, policy: ModelRetryPolicy): number | undefined {
  if (retries >= policy.maxRetries) return undefined;
  if (error instanceof APIUserAbortError || error instanceof APIConnectionTimeoutError) return undefined;
  let askedMs: number | undefined;
  if (error instanceof APIError && error.status !== undefined) {
    if (!isRetryableAnswer(error.status, error.headers)) return undefined;
    askedMs = readRetryAfterMs(error.headers);
  } else if (!(error instanceof APIConnectionError)) return undefined;
  const delay = askedMs ?? backoffWithJitter(retries);
  return delay <= policy.maxWaitMs ? delay : undefined;
}

function isRetryableAnswer(status: number, headers: Headers | undefined): boolean {
  const says = headers?.get('x-should-retry');
  if (says === 'true') return true;
  if (says === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The wait a rate-limited or overloaded API asks for, in ms; undefined when it names none (or one that is no time). */
export function readRetryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const milliseconds = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** 0.5 s, 1 s, 2 s … up to 8 s, each shortened by up to a quarter so retries from many turns spread out (the SDK's curve). */
function backoffWithJitter(retries: number): number {
  const base = Math.min(500 * 2 ** retries, 8000);
  return Math.round(base * (1 - Math.random() * 0.25));
}
