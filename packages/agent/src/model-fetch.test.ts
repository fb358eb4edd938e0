import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { APIConnectionTimeoutError, APIUserAbortError, RateLimitError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelFetch, ModelFetchError } from './model-fetch.ts';

// A bare HTTP server stands in for the model: these tests are about how the
// OpenAI SDK sees answers through this fetch, not about any model's behaviour.
describe('createModelFetch under the OpenAI SDK', () => {
  let server: Server;
  let baseURL = '';
  const seen: { auth?: string; body: unknown }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        if (req.url?.startsWith('/old/')) {
          res.writeHead(308, { location: req.url.replace('/old/', '/v1/') });
          res.end();
          return;
        }
        const body = JSON.parse(raw) as { messages: { content: string }[] };
        seen.push({ auth: req.headers.authorization, body });
        const text = body.messages.at(-1)?.content ?? '';
        if (text === 'busy') {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '1' });
          res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error', code: null } }));
          return;
        }
        if (text === 'hang') return; // never answers: only an abort or the timeout ends it
        res.writeHead(200, { 'content-type': 'text/event-stream', 'set-cookie': ['a=1', 'b=2'] });
        for (const piece of ['Hel', 'lo']) {
          res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
        }
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const client = (timeout = 5_000) => new OpenAI({ baseURL, apiKey: 'sk-test', timeout, maxRetries: 0, fetch: createModelFetch() });
  const ask = (text: string, c = client(), signal?: AbortSignal) =>
    c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: text }], stream: true }, { signal });

  it('streams an answer, sending the request body and the API key as the SDK built them', async () => {
    let answer = '';
    for await (const chunk of await ask('hi')) answer += chunk.choices[0]?.delta.content ?? '';
    expect(answer).toBe('Hello');
    expect(seen.at(-1)).toEqual({ auth: 'Bearer sk-test', body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true } });
  });

  it('follows a redirect of the base URL, as fetch does', async () => {
    const moved = new OpenAI({ baseURL: baseURL.replace('/v1', '/old'), apiKey: 'sk-test', maxRetries: 0, fetch: createModelFetch() });
    let answer = '';
    for await (const chunk of await ask('moved', moved)) answer += chunk.choices[0]?.delta.content ?? '';
    expect(answer).toBe('Hello');
  });

  it('hands error statuses to the SDK, which raises its typed error', async () => {
    await expect(ask('busy')).rejects.toBeInstanceOf(RateLimitError);
  });

  it('an abort by the caller is an abort to the SDK, not a connection failure', async () => {
    const controller = new AbortController();
    const pending = ask('hang', client(), controller.signal);
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
  });

  it("the SDK's own timeout still fires", async () => {
    await expect(ask('hang', client(100))).rejects.toBeInstanceOf(APIConnectionTimeoutError);
  });

  it('refuses a body it cannot send, with a clear error', async () => {
    const modelFetch = createModelFetch();
    await expect(modelFetch(`${baseURL}/chat/completions`, { method: 'POST', body: new Uint8Array([1]) })).rejects.toBeInstanceOf(ModelFetchError);
  });
});
