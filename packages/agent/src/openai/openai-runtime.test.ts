import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunTurnRequest } from '../agent-runtime.ts';
import { builtinTools } from '../tools/builtin-tools.ts';
import { createToolRegistry } from '../tools/tool-registry.ts';
import { assignToolCallIds, createOpenAiRuntime, type OpenAiRuntimeOptions } from './openai-runtime.ts';

type Answer = (res: ServerResponse, body: { messages: { role: string }[] }) => void;

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const answerText =
  (text: string): Answer =>
  (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${chunk({ role: 'assistant', content: text })}${chunk({}, 'stop')}data: [DONE]\n\n`);
  };

/** A tool call as some OpenAI-compatible servers stream it: with no `id`. */
const answerToolCallWithoutId: Answer = (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const call = { index: 0, type: 'function', function: { name: 'current_time', arguments: '{}' } };
  res.end(`${chunk({ role: 'assistant', tool_calls: [call] })}${chunk({}, 'tool_calls')}data: [DONE]\n\n`);
};

const answerWaits =
  (...seconds: number[]): Answer =>
  (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const calls = seconds.map((s, index) => ({ index, id: `call_w${index}`, type: 'function', function: { name: 'wait', arguments: JSON.stringify({ seconds: s }) } }));
    res.end(`${chunk({ role: 'assistant', tool_calls: calls })}${chunk({}, 'tool_calls')}data: [DONE]\n\n`);
  };

const answerError =
  (status: number, headers: Record<string, string> = {}): Answer =>
  (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ error: { message: `scripted ${status}`, type: status === 429 ? 'rate_limit_error' : 'server_error', code: null } }));
  };

// A bare HTTP server stands in for the model: these tests are about what the
// runtime does with the model's answers (ids, 429s, 5xx), not about a model.
describe('createOpenAiRuntime', () => {
  let server: Server;
  let baseURL = '';
  let answers: Answer[] = [];
  let received: number[] = [];
  let bodies: { messages: unknown[]; tools?: unknown[] }[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (data: Buffer) => (raw += data.toString()));
      req.on('end', () => {
        received.push(performance.now());
        bodies.push(JSON.parse(raw) as { messages: unknown[] });
        const answer = answers.shift() ?? answerText('fallback');
        answer(res, JSON.parse(raw) as { messages: { role: string }[] });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    answers = [];
    received = [];
    bodies = [];
  });

  const runtime = (overrides: Partial<OpenAiRuntimeOptions> = {}) =>
    createOpenAiRuntime({ baseURL, apiKey: 'sk-test', model: 'm', timeoutMs: 5_000, maxToolIterations: 4, tools: createToolRegistry(builtinTools), ...overrides });
  const ask = (signal = new AbortController().signal): RunTurnRequest => ({ instructions: 'be brief', history: [], notes: [], input: ['hi'], signal });

  describe('tool call ids', () => {
    it('makes up a different id in every turn for a tool call the model sent without one', async () => {
      const agent = runtime();
      const ids: string[] = [];
      for (let turn = 0; turn < 2; turn++) {
        answers = [answerToolCallWithoutId, answerText('two')];
        const result = await agent.runTurn(ask());
        const call = result.entries.find((e) => e.role === 'assistant' && e.toolCalls);
        const toolResult = result.entries.find((e) => e.role === 'tool');
        const id = call?.role === 'assistant' ? call.toolCalls?.[0]?.id : undefined;
        expect(id).toMatch(/^call_[0-9a-f]{24}$/);
        // The tool's result answers the same id.
        expect(toolResult?.role === 'tool' ? toolResult.toolCallId : undefined).toBe(id);
        ids.push(id as string);
      }
      // Was `call_0_0` both times: two identical cut tails shared one recovery-note key.
      expect(ids[0]).not.toBe(ids[1]);
    });

    it('keeps the ids the model gave', () => {
      const [given, made] = assignToolCallIds([{ id: 'call_from_model' }, { id: '' }]);
      expect(given?.id).toBe('call_from_model');
      expect(made?.id).toMatch(/^call_[0-9a-f]{24}$/);
      expect(assignToolCallIds([{ id: '' }])[0]?.id).not.toBe(made?.id);
    });
  });

  describe('the edge: our words in, chat-completions messages out, entries back', () => {
    const answerToolCall: Answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const call = { index: 0, id: 'call_t1', type: 'function', function: { name: 'calculator', arguments: '{"expression":"2+2"}' } };
      res.end(`${chunk({ role: 'assistant', content: 'Let me add.', tool_calls: [call] })}${chunk({}, 'tool_calls')}data: [DONE]\n\n`);
    };
    const request = (): RunTurnRequest => ({
      instructions: 'be brief',
      history: [
        { role: 'user', kind: 'summary', content: 'They met.' },
        { role: 'user', kind: 'message', content: 'hello' },
        { role: 'assistant', kind: 'message', content: 'hi' },
      ],
      notes: ['a note for this request only'],
      input: ['what is 2+2?'],
      signal: new AbortController().signal,
    });

    it('sends the notes once, before the input, and the tool round after it; the entries come back in our words', async () => {
      answers = [answerToolCall, answerText('4')];
      const accepted: number[] = [];
      const result = await runtime().runTurn({ ...request(), onModelAccepted: () => void accepted.push(bodies.length) });
      const head = [
        { role: 'system', content: 'be brief' },
        { role: 'system', content: 'Summary of the earlier conversation (written by the gateway):\nThey met.' },
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi' },
      ];
      const input = { role: 'user', content: 'what is 2+2?' };
      expect(bodies[0]?.messages).toEqual([...head, { role: 'system', content: 'a note for this request only' }, input]);
      expect(bodies[1]?.messages).toEqual([
        ...head,
        input,
        { role: 'assistant', content: 'Let me add.', tool_calls: [{ id: 'call_t1', type: 'function', function: { name: 'calculator', arguments: '{"expression":"2+2"}' } }] },
        { role: 'tool', tool_call_id: 'call_t1', content: '4' },
      ]);
      expect(bodies[0]?.tools).toEqual(JSON.parse(runtime().fixedRequestText));
      expect(accepted).toEqual([1]);
      expect(result).toEqual({
        outcome: 'completed',
        text: '4',
        toolIterations: 1,
        entries: [
          { role: 'assistant', content: 'Let me add.', toolCalls: [{ id: 'call_t1', name: 'calculator', arguments: '{"expression":"2+2"}' }] },
          { role: 'tool', toolCallId: 'call_t1', toolName: 'calculator', content: '4' },
          { role: 'assistant', content: '4' },
        ],
      });
    });

    it('adds steered input before a follow-up request, and returns it among the entries', async () => {
      answers = [answerToolCall, answerText('4, and hello')];
      const result = await runtime().runTurn({ ...request(), notes: [], takeSteerInput: async () => [{ text: 'also hi', inboundEventId: 7 }] });
      expect(bodies[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'also hi' });
      expect(result.entries[2]).toEqual({ role: 'user', content: 'also hi', inboundEventId: 7 });
    });

    it('returns a failure as a value, with the entries finished before it', async () => {
      answers = [answerToolCall, answerError(400)];
      const result = await runtime().runTurn(request());
      expect(result).toMatchObject({ outcome: 'failed', failure: { code: 'MODEL_FAILED' }, toolIterations: 1 });
      expect(result.entries.map((e) => e.role)).toEqual(['assistant', 'tool']);
    });
  });

  describe('model errors', () => {
    it('retries a 429 after the wait its Retry-After asks for, then answers', async () => {
      answers = [answerError(429, { 'retry-after': '1' }), answerText('hello')];
      const retries: unknown[] = [];
      const result = await runtime({ onRetry: (retry) => retries.push(retry) }).runTurn(ask());
      expect(result).toMatchObject({ outcome: 'completed', text: 'hello' });
      expect(received).toHaveLength(2);
      expect((received[1] ?? 0) - (received[0] ?? 0)).toBeGreaterThanOrEqual(950);
      expect(retries).toEqual([{ status: 429, waitMs: 1000, retries: 0 }]);
    });

    it('gives up after maxRetries retries of a 500 with MODEL_FAILED', async () => {
      answers = [answerError(500), answerError(500), answerError(500), answerText('never')];
      const result = await runtime({ retry: { maxRetries: 2 } }).runTurn(ask());
      expect(result).toMatchObject({ outcome: 'failed', failure: { code: 'MODEL_FAILED', message: 'model request failed (500)' }, entries: [] });
      expect(received).toHaveLength(3);
    });

    it('does not wait out a Retry-After longer than the longest wait: MODEL_RATE_LIMITED after one try', async () => {
      answers = [answerError(429, { 'retry-after': '3600' }), answerText('too late')];
      const started = performance.now();
      const result = await runtime({ retry: { maxWaitMs: 30_000 } }).runTurn(ask());
      expect(result).toMatchObject({ outcome: 'failed', failure: { code: 'MODEL_RATE_LIMITED' } });
      expect(received).toHaveLength(1);
      expect(performance.now() - started).toBeLessThan(2_000);
    });

    it('does not retry a 400', async () => {
      answers = [answerError(400), answerText('never')];
      expect(await runtime().runTurn(ask())).toMatchObject({ outcome: 'failed', failure: { code: 'MODEL_FAILED' } });
      expect(received).toHaveLength(1);
    });

    it('ends the turn as interrupted at once when aborted while waiting to retry', async () => {
      answers = [answerError(429, { 'retry-after-ms': '10000' }), answerText('too late')];
      const controller = new AbortController();
      let abortedAt = 0;
      const turn = runtime({
        onRetry: () =>
          setTimeout(() => {
            abortedAt = performance.now();
            controller.abort();
          }, 50),
      }).runTurn(ask(controller.signal));
      await expect(turn).resolves.toMatchObject({ outcome: 'interrupted' });
      expect(performance.now() - abortedAt).toBeLessThan(200);
      expect(received).toHaveLength(1);
    });
  });

  describe('the turn wait budget', () => {
    it('is shared by every wait of one turn, across tool rounds, and starts afresh with the next turn', async () => {
      const agent = runtime({ turnWaitBudgetMs: 300 });
      const toolResults = (entries: { role: string; content: string }[]) => entries.filter((e) => e.role === 'tool').map((e) => e.content);
      answers = [answerWaits(0.2), answerWaits(0.2, 0.1), answerText('done')];
      const first = await agent.runTurn(ask());
      expect(first).toMatchObject({ outcome: 'completed', text: 'done', toolIterations: 2 });
      expect(toolResults(first.entries)).toEqual([
        'waited 0.2 seconds',
        "error: refused: only 0.1 of this turn's 0.3 seconds of waiting are left; wait less or answer without waiting",
        'waited 0.1 seconds',
      ]);
      answers = [answerWaits(0.2), answerText('again')];
      expect(toolResults((await agent.runTurn(ask())).entries)).toEqual(['waited 0.2 seconds']);
    });
  });
});
