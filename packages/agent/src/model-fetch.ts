import { Readable } from 'node:stream';
import { Agent, interceptors, request } from 'undici';

export type ModelFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const nullBodyStatuses = new Set([204, 205, 304]);

export class ModelFetchError extends Error {
  readonly code = 'MODEL_FETCH_UNSUPPORTED';
}

/**
 * The `fetch` the OpenAI SDK uses to reach the model, over undici's
 * `request` API and one keep-alive connection pool per process.
 *
 * Why by hand: the SDK takes any fetch, and Node's global fetch (undici's
 * WHATWG layer) costs about 0.3 ms more per request than undici's own
 * `request` on loopback, measured on the bench machine (2026-11-23). With an
 * instant model that is a large part of a turn's scheduling time
 * (docs/turns.md). No library offers this glue: it only maps the SDK's
 * init onto `request` and the answer back onto a web `Response`. Aborts
 * (the SDK's timeout and the turn's interrupt) pass through as `signal`;
 * undici rejects with an `AbortError`, which the SDK reports as an abort.
 */
export function createModelFetch(options: { keepAliveTimeoutMs?: number } = {}): ModelFetch {
  // Redirects are followed as fetch follows them (a base URL behind a proxy that moves it).
  const dispatcher = new Agent({ keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000 }).compose(interceptors.redirect({ maxRedirections: 5 }));
  return async (input, init = {}) => {
    // The SDK sends chat completions as a URL and a JSON string; anything else is a caller's mistake, said plainly.
    if (input instanceof Request) throw new ModelFetchError('the model fetch takes a URL, not a Request');
    if (init.body != null && typeof init.body !== 'string') throw new ModelFetchError('the model fetch sends string bodies only');
    const answer = await request(input, {
      method: (init.method ?? 'GET').toUpperCase() as 'GET',
      headers: new Headers(init.headers),
      body: init.body ?? undefined,
      signal: init.signal ?? undefined,
      dispatcher,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
    }
    // These statuses must have no body in a web Response (its constructor throws otherwise).
    const empty = nullBodyStatuses.has(answer.statusCode);
    if (empty) answer.body.resume();
    return new Response(empty ? null : (Readable.toWeb(answer.body) as ReadableStream<Uint8Array>), { status: answer.statusCode, headers });
  };
}
