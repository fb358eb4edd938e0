import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@switchboard/logger';
import { sleepUnlessAborted, waitForAbort } from './abortable.ts';
import { classifyError } from './errors.ts';
import { watchClient } from './http-helpers.ts';
import type { ModelRequestRecord, ModelRequestStore } from './model-requests.ts';
import { buildChunks, buildCompletion, buildError, createMeta, estimateUsage, findRequestProblem } from './model-response.ts';
import type { ModelScriptRunner } from './model-script.ts';

export interface CompletionsDeps {
  script: ModelScriptRunner;
  requests: ModelRequestStore;
  shutdown: AbortSignal;
  log: Logger;
}

/** `POST /v1/chat/completions` (and `/chat/completions`): the scripted OpenAI-compatible model. */
export async function registerCompletions(app: FastifyInstance, deps: CompletionsDeps): Promise<void> {
  app.setErrorHandler((error, _request, reply) => {
    const { statusCode, message } = classifyError(error);
    const type = statusCode < 500 ? 'invalid_request_error' : 'server_error';
    return reply.code(statusCode).send(buildError(message, type, null));
  });

  const handler = (request: FastifyRequest, reply: FastifyReply) => answerCompletion(request, reply, deps);
  app.post('/v1/chat/completions', handler);
  app.post('/chat/completions', handler);

  const listModels = async () => ({
    object: 'list',
    data: [{ id: 'switchboard-sim', object: 'model', created: 0, owned_by: 'switchboard' }],
  });
  app.get('/v1/models', listModels);
  app.get('/models', listModels);
}

async function answerCompletion(request: FastifyRequest, reply: FastifyReply, deps: CompletionsDeps): Promise<void> {
  const { requests, shutdown, log } = deps;
  const body = request.body;
  const record = requests.record(body ?? null);
  // Written by hand from here on: the response may be a long SSE stream whose
  // abort by the client is exactly what tests measure.
  reply.hijack();
  const res = reply.raw;
  const { signal, clientGone } = watchClient(reply, shutdown);
  signal.addEventListener(
    'abort',
    () => {
      if (clientGone()) requests.markAborted(record);
      else res.destroy();
    },
    { once: true },
  );

  try {
    await respond({ res, entry: record, abort: signal }, body, deps);
  } catch (error) {
    log.error({ err: error, requestId: record.id }, 'chat completion failed');
    if (!res.headersSent) writeJson(res, record.id, { status: 500, payload: buildError('The simulator failed to answer.', 'server_error', null) });
    else res.destroy();
    requests.markFinished(record, 500);
  }
}

/** The request being answered: the raw response, its record, and the signal that fires when the client goes. */
interface Exchange {
  res: ServerResponse;
  entry: ModelRequestRecord;
  abort: AbortSignal;
}

/** Validates, applies the plan's delay and writes the answer; returns early once the client is gone. */
async function respond(exchange: Exchange, payload: unknown, deps: CompletionsDeps): Promise<void> {
  const { res, entry, abort } = exchange;
  const { script, requests } = deps;
  const problem = findRequestProblem(payload);
  if (problem) {
    writeJson(res, entry.id, { status: 400, payload: buildError(problem.message, 'invalid_request_error', problem.code, problem.param) });
    requests.markFinished(entry, 400);
    return;
  }
  const requestBody = payload as { messages: unknown[]; model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } };
  const plan = script.plan(requestBody.messages);
  if (plan.ruleIndex !== undefined) entry.ruleIndex = plan.ruleIndex;

  if (plan.kind === 'hang') return waitForAbort(abort);
  if (!(await sleepUnlessAborted(plan.delayMs, abort))) return;

  if (plan.kind === 'error' && plan.error) {
    writeJson(res, entry.id, { status: plan.error.status, payload: buildError(plan.error.message, plan.error.type, plan.error.code), headers: plan.error.headers });
    requests.markFinished(entry, plan.error.status);
    return;
  }

  const meta = createMeta(requestBody.model);
  const usage = estimateUsage(requestBody.messages, plan);
  requests.markResponded(entry);
  if (requestBody.stream !== true) {
    writeJson(res, entry.id, { status: 200, payload: buildCompletion(meta, plan, usage) });
    requests.markFinished(entry, 200);
    return;
  }

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-request-id': `req_sim_${entry.id}`,
  });
  const chunks = [...buildChunks(meta, plan, usage, requestBody.stream_options?.include_usage === true)];
  if (plan.chunkDelayMs <= 0) {
    // An instant answer goes out in one write: a socket write per chunk costs
    // both ends a syscall and a wake-up each, which is all the bench measures.
    res.end(`${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`);
    requests.markFinished(entry, 200);
    return;
  }
  let first = true;
  for (const chunk of chunks) {
    if (!first && !(await sleepUnlessAborted(plan.chunkDelayMs, abort))) return;
    if (abort.aborted) return;
    first = false;
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  res.end('data: [DONE]\n\n');
  requests.markFinished(entry, 200);
}

interface JsonAnswer {
  status: number;
  payload: unknown;
  headers?: Record<string, string>;
}

function writeJson(res: ServerResponse, requestId: number, answer: JsonAnswer): void {
  const { status, payload, headers = {} } = answer;
  const text = JSON.stringify(payload);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'x-request-id': `req_sim_${requestId}`,
  });
  res.end(text);
}
