import { Agent, request as send } from 'undici';

export interface JsonRequest {
  method?: 'GET' | 'POST' | 'DELETE';
  body?: unknown;
  /** Non-2xx statuses whose JSON body is still an answer (the simulator's 408 on a wait timeout). */
  acceptStatus?: number[];
  signal?: AbortSignal | undefined;
}

// Through undici's `request`, not the global fetch: the load generator shares
// the machine's cores with the system it measures, and the lighter client
// takes less from the figures (docs/turns.md, "A lighter harness"). No
// client-side timeouts: a wait call is bounded by its own timeout_ms and the
// caller's signal, and may outlast undici's default of five minutes.
const dispatcher = new Agent({ keepAliveTimeout: 10_000, headersTimeout: 0, bodyTimeout: 0 });

/** One JSON call to the simulator or a gateway; a non-2xx answer throws with its status and the start of its body. */
export async function readJson<T>(url: string, request: JsonRequest = {}): Promise<T> {
  // A run shares one signal across thousands of calls, most of them at once:
  // each call gets its own controller, tied to the shared signal only while
  // the call lasts, so the shared one never collects a listener per call.
  const shared = request.signal;
  const own = new AbortController();
  const abort = () => own.abort(shared?.reason);
  if (shared?.aborted) abort();
  shared?.addEventListener('abort', abort, { once: true });
  let text: string;
  let status: number;
  try {
    const answer = await send(url, {
      method: request.method ?? 'GET',
      ...(request.body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request.body) } : {}),
      signal: own.signal,
      dispatcher,
    });
    status = answer.statusCode;
    text = await answer.body.text();
  } finally {
    shared?.removeEventListener('abort', abort);
  }
  if ((status < 200 || status >= 300) && !request.acceptStatus?.includes(status)) {
    // Bot API paths carry the token; never print it.
    throw new Error(`${url.replace(/\/bot[^/]+/, '/bot<token>')} answered ${status}: ${text.slice(0, 300)}`);
  }
  return (text ? JSON.parse(text) : undefined) as T;
}
