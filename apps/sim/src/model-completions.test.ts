import OpenAI, { APIError, APIUserAbortError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSim, simEventName, type ModelRequestRecord, type Sim, type SimEvent } from './index.ts';

let sim: Sim;
let baseUrl: string;
let client: OpenAI;

beforeAll(async () => {
  sim = await createSim({ logLevel: 'silent' });
  baseUrl = await sim.listen(0);
  // No SDK retries: each scripted answer must be seen exactly once.
  client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'x', maxRetries: 0 });
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => sim.reset());

async function setScript(script: unknown): Promise<void> {
  const response = await fetch(`${baseUrl}/control/model/script`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(script) });
  expect(response.status).toBe(200);
}

async function recordedRequests(): Promise<ModelRequestRecord[]> {
  return (await fetch(`${baseUrl}/control/model/requests`).then((response) => response.json())) as ModelRequestRecord[];
}

/** Resolves with the next recorded event of `type` (tests await events, never sleep); fails after 5 s. */
function nextEvent(type: SimEvent['type']): Promise<SimEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sim.state.events.off(simEventName, onEvent);
      reject(new Error(`no ${type} event within 5 s`));
    }, 5000);
    const onEvent = (event: SimEvent) => {
      if (event.type !== type) return;
      clearTimeout(timer);
      sim.state.events.off(simEventName, onEvent);
      resolve(event);
    };
    sim.state.events.on(simEventName, onEvent);
  });
}

const ask = (text: string) => [{ role: 'system' as const, content: 'be brief' }, { role: 'user' as const, content: text }];

describe('chat completions through the openai SDK', () => {
  it('echoes the last user message by default, in the chat.completion shape', async () => {
    const completion = await client.chat.completions.create({
      model: 'sim-model',
      messages: [...ask('first'), { role: 'assistant', content: 'echo: first' }, { role: 'user', content: 'second' }],
    });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('sim-model');
    expect(completion.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'echo: second', refusal: null }, finish_reason: 'stop', logprobs: null },
    ]);
    expect(completion.usage?.completion_tokens).toBe(Math.ceil('echo: second'.length / 4));
    expect(completion.usage?.total_tokens).toBe((completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0));

    const [recorded] = await recordedRequests();
    expect(recorded).toMatchObject({ id: 1, stream: false, status: 200, body: { model: 'sim-model' } });
    expect(recorded?.finishedAt).toBeGreaterThanOrEqual(recorded?.receivedAt ?? Infinity);
  });

  it('streams text in chunkSize pieces that assemble to the reply, with a usage chunk', async () => {
    await setScript({ default: { type: 'fixed', text: 'The quick brown fox jumps over the lazy dog.' }, chunkSize: 5 });
    const stream = await client.chat.completions.create({
      model: 'sim-model',
      messages: ask('go'),
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let finishReason: string | null = null;
    let usageSeen = false;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      const choice = chunk.choices[0];
      if (choice?.delta.content) pieces.push(choice.delta.content);
      if (choice?.finish_reason) finishReason = choice.finish_reason;
      if (chunk.usage) usageSeen = true;
    }
    expect(pieces.join('')).toBe('The quick brown fox jumps over the lazy dog.');
    expect(pieces.length).toBe(Math.ceil(44 / 5));
    expect(finishReason).toBe('stop');
    expect(usageSeen).toBe(true);
  });

  it('streams tool calls that the SDK stream helper assembles, once, then answers normally', async () => {
    await setScript({
      rules: [{ match: 'what time', toolCalls: [{ name: 'current_time', arguments: {} }, { name: 'calculator', arguments: { expression: '6 * 7' } }] }],
      chunkSize: 4,
    });
    const runner = client.chat.completions.stream({ model: 'sim-model', messages: ask('what time is it?') });
    const final = await runner.finalChatCompletion();
    const choice = final.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const calls = (choice?.message.tool_calls ?? []).map((call) => (call.type === 'function' ? [call.function.name, JSON.parse(call.function.arguments)] : []));
    expect(calls).toEqual([
      ['current_time', {}],
      ['calculator', { expression: '6 * 7' }],
    ]);
    expect(choice?.message.tool_calls?.every((call) => call.id.startsWith('call_'))).toBe(true);

    // A tool rule answers once by default: the follow-up request gets the default reply.
    const followUp = await client.chat.completions.create({ model: 'sim-model', messages: ask('what time is it?') });
    expect(followUp.choices[0]?.message.content).toBe('echo: what time is it?');
    expect((await recordedRequests()).map((request) => request.ruleIndex)).toEqual([0, undefined]);
  });

  it('answers every first step with a firstStep tool rule, and never the follow-up that carries its tool results', async () => {
    await setScript({ rules: [{ match: 'slow', firstStep: true, toolCalls: [{ name: 'wait', arguments: { seconds: 1 } }] }] });
    const first = await client.chat.completions.create({ model: 'sim-model', messages: ask('slow please') });
    const again = await client.chat.completions.create({ model: 'sim-model', messages: ask('slow please') });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(again.choices[0]?.finish_reason).toBe('tool_calls');
    const followUp = await client.chat.completions.create({
      model: 'sim-model',
      messages: [
        ...ask('slow please'),
        { role: 'assistant', content: null, tool_calls: [call!] },
        { role: 'tool', tool_call_id: call!.id, content: 'waited 1 seconds' },
      ],
    });
    expect(followUp.choices[0]?.message.content).toBe('echo: slow please');
  });

  it('returns non-streaming tool calls with null content', async () => {
    await setScript({ rules: [{ toolCalls: [{ name: 'wait', arguments: { seconds: 2 } }] }] });
    const completion = await client.chat.completions.create({ model: 'sim-model', messages: ask('slow please') });
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'wait', arguments: '{"seconds":2}' } }] },
    });
  });

  it('turns an error rule into an APIError with its status', async () => {
    await setScript({ rules: [{ matchRegex: '^boom', error: { status: 503, message: 'overloaded' }, times: 1 }] });
    const error = await client.chat.completions.create({ model: 'sim-model', messages: ask('boom now') }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(503);
    expect((error as APIError).message).toContain('overloaded');
    expect((error as APIError).type).toBe('server_error');
    // times: 1 — the next request is answered normally.
    await expect(client.chat.completions.create({ model: 'sim-model', messages: ask('boom now') })).resolves.toMatchObject({
      choices: [{ message: { content: 'echo: boom now' } }],
    });
  });

  it('sends an error rule\'s Retry-After and retry-after-ms headers with the error, as rate-limited APIs do', async () => {
    await setScript({ rules: [{ match: 'busy', error: { status: 429, retryAfter: 7, retryAfterMs: 6500 }, times: 1 }] });
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-model', messages: ask('busy now') }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(response.headers.get('retry-after-ms')).toBe('6500');
    expect(await response.json()).toMatchObject({ error: { type: 'rate_limit_error', code: null } });
  });

  it('rejects a request without messages with a 400 in OpenAI shape', async () => {
    const error = await client.chat.completions.create({ model: 'sim-model' } as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(400);
    expect((error as APIError).code).toBe('missing_required_parameter');
  });

  it('records abortedAt when the client aborts a hanging request', async () => {
    await setScript({ rules: [{ match: 'hang', hang: true }] });
    const controller = new AbortController();
    const received = nextEvent('model.request');
    const aborted = nextEvent('model.aborted');
    const call = client.chat.completions.create({ model: 'sim-model', messages: ask('hang on'), stream: true }, { signal: controller.signal });
    await received;
    const abortedByClientAt = Date.now();
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(APIUserAbortError);

    const event = await aborted;
    const record = event.data as ModelRequestRecord;
    expect(record.abortedAt).toBeGreaterThanOrEqual(abortedByClientAt);
    expect(record.finishedAt).toBeUndefined();
    expect(record.ruleIndex).toBe(0);

    const waited = await fetch(`${baseUrl}/control/model/wait?count=1&state=aborted&timeout_ms=1000`).then((response) => response.json());
    expect(waited).toMatchObject([{ id: record.id, abortedAt: record.abortedAt }]);
  });

  it('stops writing a stream the client aborted midway', async () => {
    await setScript({ default: { type: 'fixed', text: 'x' }, rules: [{ replyRepeat: { text: 'word ', count: 200 }, chunkDelayMs: 20 }], chunkSize: 5 });
    const controller = new AbortController();
    const aborted = nextEvent('model.aborted');
    const stream = await client.chat.completions.create({ model: 'sim-model', messages: ask('long'), stream: true }, { signal: controller.signal });
    let chunks = 0;
    const reading = (async () => {
      for await (const _chunk of stream) {
        chunks += 1;
        if (chunks === 3) controller.abort();
      }
    })();
    // The SDK ends the iteration quietly on abort; what matters is what the sim saw.
    await reading.catch(() => undefined);
    const record = (await aborted).data as ModelRequestRecord;
    expect(record.abortedAt).toBeDefined();
    expect(record.finishedAt).toBeUndefined();
    expect(chunks).toBeLessThan(200);
  });

  it('replays recorded replies from a lookup script and falls back otherwise', async () => {
    await setScript({ default: { type: 'lookup', replies: { 'hi bot': 'hello human', 'and?': 'that is all' }, fallback: 'no idea' } });
    const reply = async (text: string) => (await client.chat.completions.create({ model: 'm', messages: ask(text) })).choices[0]?.message.content;
    expect(await reply('hi bot')).toBe('hello human');
    expect(await reply('and?')).toBe('that is all');
    expect(await reply('unknown')).toBe('no idea');
  });

  it('holds the first byte for delayMs', async () => {
    await setScript({ delayMs: 250 });
    const startedAt = performance.now();
    await client.chat.completions.create({ model: 'm', messages: ask('wait') });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(240);
  });
});
