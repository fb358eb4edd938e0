import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentError } from './agent-error.ts';
import { assignToolCallIds, createOpenAiRuntime, type OpenAiRuntimeOptions } from './openai-runtime.ts';
import { builtinTools } from './tools/builtin-tools.ts';
import { createToolRegistry } from './tools/tool-registry.ts';

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

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (data: Buffer) => (raw += data.toString()));
      req.on('end', () => {
        received.push(performance.now());
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
  });

  const runtime = (overrides: Partial<OpenAiRuntimeOptions> = {}) =>
    createOpenAiRuntime({ baseURL, apiKey: 'sk-test', model: 'm', timeoutMs: 5_000, maxToolIterations: 4, tools: createToolRegistry(builtinTools), ...overrides });
  const ask = (signal = new AbortController().signal) => ({ messages: [{ role: 'user' as const, content: 'hi' }], signal });

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
      const error = await runtime({ retry: { maxRetries: 2 } })
        .runTurn(ask())
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe('MODEL_FAILED');
      expect(received).toHaveLength(3);
    });

    it('does not wait out a Retry-After longer than the longest wait: MODEL_RATE_LIMITED after one try', async () => {
      answers = [answerError(429, { 'retry-after': '3600' }), answerText('too late')];
      const started = performance.now();
      const error = await runtime({ retry: { maxWaitMs: 30_000 } })
        .runTurn(ask())
        .catch((caught: unknown) => caught);
      expect((error as AgentError).code).toBe('MODEL_RATE_LIMITED');
      expect(received).toHaveLength(1);
      expect(performance.now() - started).toBeLessThan(2_000);
    });

    it('does not retry a 400', async () => {
      answers = [answerError(400), answerText('never')];
      const error = await runtime()
        .runTurn(ask())
        .catch((caught: unknown) => caught);
      expect((error as AgentError).code).toBe('MODEL_FAILED');
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
      expect(first.text).toBe('done');
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
