import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunTurnRequest } from '../agent-runtime.ts';
import { createToolRegistry } from '../tools/tool-registry.ts';
import { createFallbackRuntime } from './fallback-runtime.ts';

type Answer = (res: ServerResponse) => void;

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const answerText = (text: string): Answer => (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`${chunk({ role: 'assistant', content: text })}${chunk({}, 'stop')}data: [DONE]\n\n`);
};
const answerError = (status: number): Answer => (res) => {
  res.writeHead(status, { 'content-type': 'application/json', 'retry-after-ms': '10' });
  res.end(JSON.stringify({ error: { message: `scripted ${status}`, type: 'error', code: null } }));
};
/** Streams some text, then the connection breaks before the answer ends. */
const answerHalfThenBreak: Answer = (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(chunk({ role: 'assistant', content: 'half an answer' }));
  setTimeout(() => res.destroy(), 20);
};

/** A bare HTTP server per endpoint stands in for a model: a queue of answers, and the models it was asked for. */
interface FakeModel {
  url: string;
  answers: Answer[];
  asked: string[];
  server: Server;
}

async function startFakeModel(name: string): Promise<FakeModel> {
  const model: FakeModel = { url: '', answers: [], asked: [], server: createServer() };
  model.server.on('request', (req, res) => {
    let raw = '';
    req.on('data', (data: Buffer) => (raw += data.toString()));
    req.on('end', () => {
      model.asked.push((JSON.parse(raw) as { model: string }).model);
      (model.answers.shift() ?? answerText(`from ${name}`))(res);
    });
  });
  await new Promise<void>((resolve) => model.server.listen(0, '127.0.0.1', resolve));
  model.url = `http://127.0.0.1:${(model.server.address() as AddressInfo).port}/v1`;
  return model;
}

const request = (): RunTurnRequest => ({ instructions: 'be brief', history: [], notes: [], input: ['hi'], signal: new AbortController().signal });

describe('createFallbackRuntime', () => {
  let primary: FakeModel;
  let second: FakeModel;
  let clock = 0;
  let moves: { from: string; to: string; status: number | undefined }[] = [];

  const build = () =>
    createFallbackRuntime({
      endpoints: [
        { baseURL: primary.url, apiKey: 'k1', model: 'primary' },
        { baseURL: second.url, apiKey: 'k2', model: 'second' },
      ],
      cooldownMs: 1000,
      now: () => clock,
      timeoutMs: 5000,
      maxToolIterations: 4,
      tools: createToolRegistry([]),
      retry: { maxRetries: 2, maxWaitMs: 50 },
      onFallback: (move) => moves.push(move),
    });

  beforeAll(async () => {
    [primary, second] = await Promise.all([startFakeModel('primary'), startFakeModel('second')]);
  });
  afterAll(() => {
    primary.server.close();
    second.server.close();
  });
  beforeEach(() => {
    for (const model of [primary, second]) {
      model.answers = [];
      model.asked = [];
    }
    clock = 0;
    moves = [];
  });

  it('answers from the primary when it answers, naming it', async () => {
    const result = await build().runTurn(request());
    expect(result).toMatchObject({ outcome: 'completed', text: 'from primary', model: 'primary' });
    expect(second.asked).toEqual([]);
  });

  it('moves on after one try of a primary answering 500, cools it down, and takes it back first after the cooldown', async () => {
    const runtime = build();
    primary.answers = [answerError(500)];
    expect(await runtime.runTurn(request())).toMatchObject({ outcome: 'completed', text: 'from second', model: 'second' });
    expect({ primary: primary.asked, second: second.asked, moves }).toEqual({ primary: ['primary'], second: ['second'], moves: [{ from: 'primary', to: 'second', status: 500 }] });

    clock = 999;
    expect(await runtime.runTurn(request())).toMatchObject({ text: 'from second' });
    expect(primary.asked).toHaveLength(1);

    clock = 1000;
    expect(await runtime.runTurn(request())).toMatchObject({ text: 'from primary', model: 'primary' });
  });

  it('does not move on for a refused request (400): the turn fails on the primary', async () => {
    primary.answers = [answerError(400)];
    const result = await build().runTurn(request());
    expect(result).toMatchObject({ outcome: 'failed', model: 'primary' });
    expect(second.asked).toEqual([]);
  });

  it('drops the half-streamed text of a primary whose connection broke and answers from the next', async () => {
    primary.answers = [answerHalfThenBreak];
    const result = await build().runTurn(request());
    expect(result).toMatchObject({ outcome: 'completed', text: 'from second', model: 'second' });
    expect(JSON.stringify(result.entries)).not.toContain('half an answer');
  });

  it('gives the last model its retries, and fails with its error when all failed', async () => {
    primary.answers = [answerError(429)];
    second.answers = [answerError(503), answerError(503), answerError(503)];
    const result = await build().runTurn(request());
    expect(result).toMatchObject({ outcome: 'failed', model: 'second' });
    expect({ primary: primary.asked.length, second: second.asked.length }).toEqual({ primary: 1, second: 3 });
  });

  describe('withModel: a model an operator chose for the conversation', () => {
    const ready = (runtime: ReturnType<typeof build>, model: string, fallback: boolean) => {
      const chosen = runtime.withModel({ model, fallback });
      if (chosen.kind !== 'ready') throw new Error(`${model} should be configured`);
      return chosen.runtime;
    };

    it('asks the chosen model first even while the primary answers', async () => {
      expect(await ready(build(), 'second', false).runTurn(request())).toMatchObject({ outcome: 'completed', text: 'from second', model: 'second' });
      expect(primary.asked).toEqual([]);
    });

    it('without fallback asks only the chosen model, with its retries, and fails there', async () => {
      primary.answers = [answerError(500), answerError(500), answerError(500)];
      const result = await ready(build(), 'primary', false).runTurn(request());
      expect(result).toMatchObject({ outcome: 'failed', model: 'primary' });
      expect({ primary: primary.asked.length, second: second.asked, moves }).toEqual({ primary: 3, second: [], moves: [] });
    });

    it('with fallback moves on to the rest of the list', async () => {
      primary.answers = [answerError(500)];
      expect(await ready(build(), 'primary', true).runTurn(request())).toMatchObject({ outcome: 'completed', text: 'from second', model: 'second' });
      expect(moves).toEqual([{ from: 'primary', to: 'second', status: 500 }]);
    });

    it('names a model no endpoint serves as not configured; null is the configured order', async () => {
      const runtime = build();
      expect(runtime.withModel({ model: 'elsewhere', fallback: true })).toEqual({ kind: 'not_configured', model: 'elsewhere' });
      expect(runtime.withModel(null)).toMatchObject({ kind: 'ready' });
    });
  });
});
