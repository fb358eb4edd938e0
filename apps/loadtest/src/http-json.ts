export interface JsonRequest {
  method?: 'GET' | 'POST' | 'DELETE';
  body?: unknown;
  /** Non-2xx statuses whose JSON body is still an answer (the simulator's 408 on a wait timeout). */
  acceptStatus?: number[];
  signal?: AbortSignal | undefined;
}

/** One JSON call to the simulator or a gateway; a non-2xx answer throws with its status and the start of its body. */
export async function readJson<T>(url: string, request: JsonRequest = {}): Promise<T> {
  const response = await fetch(url, {
    method: request.method ?? 'GET',
    ...(request.body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request.body) } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
  });
  const text = await response.text();
  if (!response.ok && !request.acceptStatus?.includes(response.status)) {
    // Bot API paths carry the token; never print it.
    throw new Error(`${url.replace(/\/bot[^/]+/, '/bot<token>')} answered ${response.status}: ${text.slice(0, 300)}`);
  }
  return (text ? JSON.parse(text) : undefined) as T;
}
