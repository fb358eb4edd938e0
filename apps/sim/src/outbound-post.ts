import { Agent, errors, request } from 'undici';

/**
 * The simulator's POSTs to the gateway (Telegram webhooks, Slack events,
 * Discord interactions), over undici's `request` API and one keep-alive pool.
 *
 * Why not the global fetch: on the bench machine every process shares two
 * cores, and the answer to a webhook arrives while the gateway hands the
 * turn to a worker. Node's fetch (undici's WHATWG layer: Request, Headers,
 * a web stream, AbortSignal.any and a timer per call) spends that time on
 * the same cores as the turn being measured; `request` does the same HTTP
 * with a fraction of the work (docs/turns.md, "A lighter harness").
 */
const dispatcher = new Agent({ keepAliveTimeout: 10_000 });

export interface PostAnswer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One POST to the gateway: where, with which headers, and the exact bytes. */
export interface GatewayPost {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export class PostTimeoutError extends Error {
  readonly code = 'SIM_POST_TIMEOUT';
}

/**
 * POSTs `body` and reads the whole answer. Rejects with PostTimeoutError
 * when no complete answer came within `timeoutMs`, and with the socket's
 * own error (ECONNREFUSED, ECONNRESET…) when the connection failed.
 */
export async function postToGateway(post: GatewayPost, timeoutMs: number, shutdown: AbortSignal): Promise<PostAnswer> {
  const { url, headers, body } = post;
  try {
    const answer = await request(url, { method: 'POST', headers, body, signal: shutdown, dispatcher, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    return { status: answer.statusCode, text: await answer.body.text(), headers: answer.headers };
  } catch (error) {
    if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError) throw new PostTimeoutError(`no answer within ${timeoutMs} ms`);
    throw error;
  }
}
