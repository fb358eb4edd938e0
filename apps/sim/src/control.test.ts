import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from './index.ts';

let sim: Sim;
let baseUrl: string;

beforeAll(async () => {
  sim = await createSim({ logLevel: 'silent' });
  baseUrl = await sim.listen(0);
});

afterAll(async () => {
  await sim.close();
});

async function call(path: string, init: RequestInit = {}): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, init);
  return { status: response.status, json: await response.json() };
}

const postJson = (path: string, body: unknown) =>
  call(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('control API', () => {
  it('reports health', async () => {
    expect(await call('/control/health')).toEqual({ status: 200, json: { ok: true } });
  });

  it('answers bad control input with a 400 that names the problem', async () => {
    const malformed = await postJson('/control/telegram/updates', '{"chat":');
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ error: 'bad_request', code: 'SIM_BAD_JSON' });

    const invalid = await postJson('/control/telegram/updates', { chat: { id: 'nope' }, text: '' });
    expect(invalid.status).toBe(400);
    expect((invalid.json as { message: string }).message).toMatch(/chat\.id: .*text: /);

    const badFault = await postJson('/control/telegram/faults', { method: 'sendMessage', kind: '418' });
    expect(badFault.status).toBe(400);

    const badScript = await postJson('/control/model/script', { rules: [{ matchRegex: '(' }] });
    expect(badScript.json).toMatchObject({ code: 'SIM_BAD_SCRIPT', message: expect.stringContaining('rules.0.matchRegex') });
  });

  it('accepts a body over 1 MiB', async () => {
    const big = 'x'.repeat(1_500_000);
    const { status, json } = await postJson('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: big }] });
    expect(status).toBe(200);
    expect((json as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toHaveLength(big.length + 'echo: '.length);
  });

  it('honours an explicit update_id and keeps counting after it', async () => {
    const first = await postJson('/control/telegram/updates', { chat: { id: 4001 }, text: 'a', update_id: 9_000_000_000 });
    const second = await postJson('/control/telegram/updates', { chat: { id: 4001 }, text: 'b' });
    expect((first.json as { update: { update_id: number } }).update.update_id).toBe(9_000_000_000);
    expect((second.json as { update: { update_id: number } }).update.update_id).toBe(9_000_000_001);
  });

  it('reset clears records and the script but keeps counters increasing', async () => {
    await postJson('/control/model/script', { default: { type: 'fixed', text: 'fixed' } });
    await postJson('/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] });
    const before = await postJson('/control/telegram/updates', { chat: { id: 4002 }, text: 'a' });

    expect(await postJson('/control/reset', {})).toEqual({ status: 200, json: { ok: true } });

    expect((await call('/control/model/requests')).json).toEqual([]);
    expect((await call('/control/model/script')).json).toMatchObject({ default: { type: 'echo' }, rules: [], chunkSize: 16 });
    expect((await call('/control/telegram/sent')).json).toEqual([]);
    const after = await postJson('/control/telegram/updates', { chat: { id: 4002 }, text: 'b' });
    const ids = [before, after].map((result) => (result.json as { update: { update_id: number; message: { message_id: number } } }).update);
    expect(ids[1]!.update_id).toBeGreaterThan(ids[0]!.update_id);
    expect(ids[1]!.message.message_id).toBeGreaterThan(ids[0]!.message.message_id);
  });

  it('times out /control/model/wait with 408 and wakes it on a request', async () => {
    await call('/control/model/requests', { method: 'DELETE' });
    const timedOut = await call('/control/model/wait?count=1&timeout_ms=30');
    expect(timedOut).toEqual({ status: 408, json: { error: 'timeout', code: 'SIM_WAIT_TIMEOUT', requests: [] } });

    const waiting = call('/control/model/wait?count=1&state=finished&timeout_ms=5000');
    await postJson('/v1/chat/completions', { messages: [{ role: 'user', content: 'ping' }] });
    const { status, json } = await waiting;
    expect(status).toBe(200);
    expect(json).toMatchObject([{ body: { messages: [{ content: 'ping' }] }, status: 200 }]);
  });

  it('lists only the requests still in flight with state=pending', async () => {
    await call('/control/model/requests', { method: 'DELETE' });
    await postJson('/control/model/script', { rules: [{ match: 'slow', reply: 'late', delayMs: 2_000 }], default: { type: 'fixed', text: 'fast' } });
    await postJson('/v1/chat/completions', { messages: [{ role: 'user', content: 'quick' }] });
    const slow = postJson('/v1/chat/completions', { messages: [{ role: 'user', content: 'slow one' }] });
    await call('/control/model/wait?count=2&timeout_ms=5000');
    expect((await call('/control/model/requests?state=pending')).json).toMatchObject([{ body: { messages: [{ content: 'slow one' }] } }]);
    expect((await call('/control/model/requests')).json).toHaveLength(2);
    await slow;
    expect((await call('/control/model/requests?state=pending')).json).toEqual([]);
    expect(await call('/control/model/requests?state=later')).toMatchObject({ status: 400, json: { code: 'SIM_BAD_QUERY' } });
  });

  it('streams recorded events as SSE', async () => {
    const controller = new AbortController();
    const response = await fetch(`${baseUrl}/control/events`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    // The comment line proves the subscription is live before anything is sent.
    let text = decoder.decode((await reader.read()).value);
    await fetch(`${baseUrl}/bot1:x/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: 4003, text: 'seen' }) });
    while (!text.includes('event: telegram.sent')) text += decoder.decode((await reader.read()).value);
    controller.abort();
    expect(text).toMatch(/event: telegram\.sent\ndata: \{"at":\d+,"data":\{"message_id":1,"chat_id":4003,"text":"seen"/);
  });

  it('answers unknown paths in the shape of the API asked', async () => {
    expect(await call('/control/nothing')).toMatchObject({ status: 404, json: { code: 'SIM_NOT_FOUND' } });
    expect(await call('/v1/embeddings', { method: 'POST' })).toMatchObject({ status: 404, json: { error: { code: 'unknown_url' } } });
  });
});
