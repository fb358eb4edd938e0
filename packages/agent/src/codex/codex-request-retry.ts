import type { CodexConnection, RpcOutcome } from './codex-connection.ts';
import { rpcCodes } from './codex-protocol.ts';

/** How a request answered "-32001 server overloaded" is retried: `tries` in all, waits doubling from `firstDelayMs`. */
export interface OverloadRetry {
  tries: number;
  firstDelayMs: number;
}

export const defaultOverloadRetry: OverloadRetry = { tries: 4, firstDelayMs: 200 };

export type RetriedOutcome = RpcOutcome | { kind: 'overloaded' } | { kind: 'aborted' };

/**
 * A request, retried while the app-server answers -32001 (its ingress queue
 * is full; the README asks for exponential backoff with jitter). `overloaded`
 * when every try was refused; `aborted` when the signal fired while waiting.
 */
export async function requestWithRetry(
  connection: CodexConnection,
  method: string,
  params: unknown,
  retry: OverloadRetry,
  signal?: AbortSignal,
): Promise<RetriedOutcome> {
  for (let attempt = 0; attempt < retry.tries; attempt++) {
    if (attempt > 0) {
      // Jitter of ±25 % so children refused together do not retry together.
      const delay = retry.firstDelayMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5);
      if (!(await waitUnlessAborted(delay, signal))) return { kind: 'aborted' };
    }
    const outcome = await connection.request(method, params);
    if (outcome.kind !== 'error' || outcome.error.code !== rpcCodes.serverOverloaded) return outcome;
  }
  return { kind: 'overloaded' };
}

/** Resolves true after `ms`, or false as soon as the signal is aborted. */
function waitUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
