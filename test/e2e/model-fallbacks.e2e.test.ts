import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '@switchboard/sim';
import type { RunningWorker } from '@switchboard/worker';
import { adminRequest, adminTokenEnv } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';
import { lastUserText, type ModelRequest } from '../support/turn-helpers.ts';

/**
 * MODEL_FALLBACKS (issue 22 item 5; docs/turns.md "Model fallbacks"): two
 * simulated models, the system's simulator as the primary and a second one
 * as the fallback. The primary fails, the user gets the fallback's answer,
 * the turn and the admin API name the fallback, the metrics count it; within
 * the cooldown the next turn goes to the fallback straight away.
 */

const chatId = 7401;
const fallbackKeyEnv = 'SB_E2E_FALLBACK_KEY';

describe('model fallbacks', () => {
  let system: TestSystem;
  let fallback: Sim;
  let fallbackUrl: string;

  const requestsAt = async (simUrl: string, prefix: string): Promise<ModelRequest[]> =>
    ((await (await fetch(`${simUrl}/control/model/requests`)).json()) as ModelRequest[]).filter((r) => lastUserText(r).startsWith(prefix));
  const send = async (text: string) => expect((await system.sendTelegram({ chatId, text })).status).toBe(200);

  beforeAll(async () => {
    fallback = await createSim({ logLevel: 'warn' });
    fallbackUrl = await fallback.listen(0, '127.0.0.1');
    await postJson(`${fallbackUrl}/control/model/script`, { default: { type: 'echo', prefix: 'fallback: ' } });
    // The in-process worker reads the fallback's key from the variable MODEL_FALLBACKS names.
    process.env[fallbackKeyEnv] = 'fallback-key';
    system = await TestSystem.start({
      gatewayEnv: { ADMIN_TOKEN: adminTokenEnv },
      workerEnv: { MODEL_FALLBACKS: `${fallbackUrl}/v1|fallback-model|${fallbackKeyEnv}`, MODEL_FALLBACK_COOLDOWN_MS: '60000', MODEL_MAX_RETRIES: '2' },
    });
    // The primary refuses every request of this chat: first a rate limit, then (were it asked again) a server error.
    await system.setModelScript({ rules: [{ match: 'c7401:first', error: { status: 429, retryAfterMs: 50 } }, { match: 'c7401:', error: { status: 500 } }] });
  });
  afterAll(async () => {
    await system?.close();
    await fallback?.close();
    delete process.env[fallbackKeyEnv];
  });

  it('answers from the fallback after the primary fails, records and counts the fallback model', async () => {
    await send('c7401:first');
    const [reply] = await system.waitForTelegram(chatId, 1);
    expect(reply?.text).toBe('fallback: c7401:first');
    // The primary was tried once (no retries when another model comes next), the fallback answered.
    expect((await requestsAt(system.simUrl, 'c7401:first')).map((r) => r.status)).toEqual([429]);
    expect((await requestsAt(fallbackUrl, 'c7401:first')).map((r) => r.status)).toEqual([200]);
    const [fallbackRequest] = await requestsAt(fallbackUrl, 'c7401:first');
    expect((fallbackRequest?.body as { model?: string }).model).toBe('fallback-model');

    const turns = await system.sql<{ status: string; model: string | null }[]>`
      select t.status, t.model from turns t join conversations c on c.id = t.conversation_id where c.chat_id = ${String(chatId)} order by t.id`;
    expect(turns).toEqual([{ status: 'completed', model: 'fallback-model' }]);
    const listed = await adminRequest<{ items: { status: string; model: string | null }[] }>(system.gateway.url, 'GET', '/admin/turns?limit=5');
    expect(listed.body.items.map((t) => ({ status: t.status, model: t.model }))).toEqual([{ status: 'completed', model: 'fallback-model' }]);

    const metrics = await workerMetrics(system);
    expect(valueOf(metrics, 'switchboard_model_answers_total{model="fallback-model"}')).toBe(1);
    expect(valueOf(metrics, 'switchboard_model_fallbacks_total{from="switchboard-sim",to="fallback-model"}')).toBe(1);
  });

  it('sends the next turn within the cooldown to the fallback straight away: the primary sees no request', async () => {
    await send('c7401:second');
    const replies = await system.waitForTelegram(chatId, 2);
    expect(replies.map((r) => r.text)).toEqual(['fallback: c7401:first', 'fallback: c7401:second']);
    expect(await requestsAt(system.simUrl, 'c7401:second')).toEqual([]);
    expect((await requestsAt(fallbackUrl, 'c7401:second')).map((r) => r.status)).toEqual([200]);
    const metrics = await workerMetrics(system);
    expect(valueOf(metrics, 'switchboard_model_answers_total{model="fallback-model"}')).toBe(2);
    expect(valueOf(metrics, 'switchboard_model_fallbacks_total{from="switchboard-sim",to="fallback-model"}')).toBe(1);
  });
});

async function workerMetrics(system: TestSystem): Promise<string> {
  const worker = system.workers[0] as RunningWorker;
  return (await fetch(`${worker.url}/metrics`)).text();
}

function valueOf(metrics: string, series: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : Number.NaN;
}

async function postJson(url: string, body: unknown): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
}
