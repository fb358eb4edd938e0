export interface JsonRequest {
  method?: 'GET' | 'POST' | 'DELETE';
  body?: unknown;
  /** Non-2xx statuses whose JSON body is still an answer (the simulator's 408 on a wait timeout). */
  acceptStatus?: number[];
  signal?: AbortSignal | undefined;
}

/** One JSON call to the simulator or a gateway; a non-2xx answer throws with its status and the start of its body. */
export async function readJson<T>(url: string, request: JsonRequest = {}): Promise<T> {
  // A run shares one signal across thousands of calls, and fetch leaves its
  // listener on the signal it is given until garbage collection: each call gets
  // its own controller, tied to the shared signal only while the call lasts.
  const shared = request.signal;
  const own = new AbortController();
  const abort = () => own.abort(shared?.reason);
  if (shared?.aborted) abort();
  shared?.addEventListener('abort', abort, { once: true });
  let text: string;
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method ?? 'GET',
      ...(request.body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request.body) } : {}),
      signal: own.signal,
    });
    text = await response.text();
  } finally {
    shared?.removeEventListener('abort', abort);
  }
  if (!response.ok && !request.acceptStatus?.includes(response.status)) {
    // Bot API paths carry the token; never print it.
    throw new Error(`${url.replace(/\/bot[^/]+/, '/bot<token>')} answered ${response.status}: ${text.slice(0, 300)}`);
  }
  return (text ? JSON.parse(text) : undefined) as T;
}
