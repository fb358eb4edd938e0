import type { CodexConnection, RpcOutcome } from './codex-connection.ts';
import { rpcCodes } from './codex-protocol.ts';

/** How a request answered "-32001 server overloaded" is retried: `tries` in all, waits doubling from `firstDelayMs`. */
export interface OverloadRetry {
  tries: number;
  firstDelayMs: number;
}

export const defaultOverloadRetry: OverloadRetry = { tries: 4, firstDelayMs: 200 };

export interface RequestOptions {
  retry: OverloadRetry;
  /** The turn's signal: nothing is sent once it is aborted, and the backoff ends at the abort. */
  signal?: AbortSignal;
  /**
   * Also stop waiting for the answer at the abort. Right for a request whose
   * late answer does no harm (`thread/resume`, `thread/start`: a thread loaded
   * for nothing); wrong for `turn/start`, whose answer names the turn that
   * must then be interrupted (issue 29, defect 6).
   */
  abandonOnAbort?: boolean;
  /** Asked before each try is sent (RunTurnRequest.mayHandOver): false, and nothing is sent (`aborted`). */
  mayStart?: () => boolean | Promise<boolean>;
}

export type RetriedOutcome = RpcOutcome | { kind: 'overloaded' } | { kind: 'aborted' };

/**
 * A request, retried while the app-server answers -32001 (its ingress queue
 * is full; the README asks for exponential backoff with jitter). `overloaded`
 * when every try was refused; `aborted` when the signal fired before a try
 * was sent, during a wait, or (with `abandonOnAbort`) before the answer.
 */
export async function requestWithRetry(connection: CodexConnection, method: string, params: unknown, options: RequestOptions): Promise<RetriedOutcome> {
  const { retry, signal } = options;
  for (let attempt = 0; attempt < retry.tries; attempt++) {
    if (attempt > 0) {
      // Jitter of ±25 % so children refused together do not retry together.
      const delay = retry.firstDelayMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5);
      if (!(await waitUnlessAborted(delay, signal))) return { kind: 'aborted' };
    }
    // Nothing is started after a stop: a thread answered late must not be followed by turn/start.
    if (signal?.aborted) return { kind: 'aborted' };
    const may = options.mayStart ? options.mayStart() : true;
    // Only a wait for the holder's word costs a tick (then the stop is read again: it may have come meanwhile).
    if (may !== true && (!(await may) || signal?.aborted)) return { kind: 'aborted' };
    const answer = connection.request(method, params);
    const outcome = options.abandonOnAbort ? await answerUnlessAborted(answer, signal) : await answer;
    if (outcome.kind !== 'error' || outcome.error.code !== rpcCodes.serverOverloaded) return outcome;
  }
  return { kind: 'overloaded' };
}

/** The answer, or `aborted` as soon as the signal is: the answer may still come, and is then dropped. */
function answerUnlessAborted(answer: Promise<RpcOutcome>, signal: AbortSignal | undefined): Promise<RpcOutcome | { kind: 'aborted' }> {
  if (!signal) return answer;
  if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
  return new Promise((resolve) => {
    const onAbort = () => resolve({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    void answer.then((outcome) => {
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    });
  });
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
