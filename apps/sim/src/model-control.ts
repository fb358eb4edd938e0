import type { FastifyInstance } from 'fastify';
import { waitUntil } from './abortable.ts';
import { SimError } from './errors.ts';
import { simEventName, type EventHub } from './event-hub.ts';
import { readIntQuery, watchClient } from './http-helpers.ts';
import type { ModelRequestStore, RequestState } from './model-requests.ts';
import type { ModelScriptRunner } from './model-script.ts';

export interface ModelControlDeps {
  script: ModelScriptRunner;
  requests: ModelRequestStore;
  hub: EventHub;
  shutdown: AbortSignal;
}

const requestStates = new Set<RequestState>(['any', 'finished', 'aborted', 'settled', 'pending']);
const maxWaitMs = 300_000;

/** `/control/model/*`: replace the script, read what the model was asked. */
export async function registerModelControl(app: FastifyInstance, deps: ModelControlDeps): Promise<void> {
  const { script, requests, hub, shutdown } = deps;

  app.post('/control/model/script', async (request) => ({ ok: true, script: script.replace(request.body) }));

  app.get('/control/model/script', async () => ({ ...script.current(), remainingTimes: script.remaining() }));

  // `state=pending` lists only requests still in flight: a chaos run polls it to aim a kill at one, without copying every request ever made.
  app.get('/control/model/requests', async (request) => requests.matching(readState(request.query as Record<string, unknown>)));

  app.delete('/control/model/requests', async () => {
    requests.clear();
    return { ok: true };
  });

  // `state` narrows what counts: e.g. state=aborted waits for the client-side abort to be seen.
  app.get('/control/model/wait', async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const count = readIntQuery(query, 'count', { fallback: 1, min: 1 }) as number;
    const timeoutMs = readIntQuery(query, 'timeout_ms', { fallback: 10_000, min: 0, max: maxWaitMs }) as number;
    const state = readState(query);
    const { signal } = watchClient(reply, shutdown);
    const check = () => {
      const matching = requests.matching(state);
      return matching.length >= count ? matching : undefined;
    };
    const found = await waitUntil(check, { emitter: hub, eventName: simEventName, timeoutMs, signal });
    if (found) return found;
    return reply.code(408).send({ error: 'timeout', code: 'SIM_WAIT_TIMEOUT', requests: requests.matching(state) });
  });
}

function readState(query: Record<string, unknown>): RequestState {
  const state = (query.state ?? 'any') as RequestState;
  if (!requestStates.has(state)) throw new SimError('SIM_BAD_QUERY', `state must be one of ${[...requestStates].join(', ')}`);
  return state;
}
