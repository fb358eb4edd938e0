import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '@switchboard/sim';
import { adminRequest, adminTokenEnv } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';
import { lastUserText, type ModelRequest } from '../support/turn-helpers.ts';

/**
 * A model chosen per conversation by an operator (issue 22 item 5, last
 * clause; docs/turns.md "Model fallbacks"): two simulated models, the
 * system's simulator as the primary (MODEL_NAME switchboard-sim) and a second
 * one as the fallback (fallback-model). Pinned without fallback, a failing
 * model is the only one asked; with fallback the turn moves on; pinned to the
 * fallback's model, it answers first while the primary is healthy; a bad
 * body changes nothing; null goes back to the configured order. The
 * cooldown is 1 ms so that each case sees the configured order as written.
 */

const failedNotice = 'Sorry, something went wrong and I could not answer that. Please try again.';
const fallbackKeyEnv = 'SB_E2E_PINNED_FALLBACK_KEY';

describe('a model chosen per conversation', () => {
  let system: TestSystem;
  let fallback: Sim;
  let fallbackUrl: string;

  const requestsAt = async (simUrl: string, text: string): Promise<ModelRequest[]> =>
    ((await (await fetch(`${simUrl}/control/model/requests`)).json()) as ModelRequest[]).filter((r) => lastUserText(r) === text);
  const modelsAsked = (requests: ModelRequest[]) => requests.map((r) => (r.body as { model?: string }).model);
  const send = async (chatId: number, text: string) => expect((await system.sendTelegram({ chatId, text })).status).toBe(200);
  const conversationOf = async (chatId: number): Promise<number> => {
    const [row] = await system.sql<{ id: number }[]>`select id::int from conversations where chat_id = ${String(chatId)}`;
    return row?.id ?? -1;
  };
  const choose = (id: number, body: unknown) => adminRequest<{ conversation?: { model: string | null; modelFallback: boolean } }>(system.gateway.url, 'PUT', `/admin/conversations/${id}/model`, { body });
  const lastTurn = async (chatId: number) => {
    const [turn] = await system.sql<{ status: string; model: string | null; error: string | null }[]>`
      select t.status, t.model, t.error from turns t join conversations c on c.id = t.conversation_id where c.chat_id = ${String(chatId)} order by t.id desc limit 1`;
    return turn;
  };

  /** A conversation that exists (its first message answered by the primary), for the operator to choose a model for. */
  async function startConversation(chatId: number): Promise<number> {
    await send(chatId, `c${chatId}:hello`);
    expect((await system.waitForTelegram(chatId, 1))[0]?.text).toBe(`echo: c${chatId}:hello`);
    return conversationOf(chatId);
  }

  beforeAll(async () => {
    fallback = await createSim({ logLevel: 'warn' });
    fallbackUrl = await fallback.listen(0, '127.0.0.1');
    await postJson(`${fallbackUrl}/control/model/script`, { default: { type: 'echo', prefix: 'fallback: ' } });
    process.env[fallbackKeyEnv] = 'fallback-key';
    system = await TestSystem.start({
      gatewayEnv: { ADMIN_TOKEN: adminTokenEnv },
      workerEnv: { MODEL_FALLBACKS: `${fallbackUrl}/v1|fallback-model|${fallbackKeyEnv}`, MODEL_FALLBACK_COOLDOWN_MS: '1', MODEL_MAX_RETRIES: '1' },
    });
    // The primary answers 500 to every message with "fail" in it, and echoes the rest.
    await system.setModelScript({ rules: [{ match: ':fail', error: { status: 500, retryAfterMs: 20 } }] });
  });
  afterAll(async () => {
    await system?.close();
    await fallback?.close();
    delete process.env[fallbackKeyEnv];
  });

  it('pinned to the primary without fallback: a 500 gives the failure notice, and the fallback is never asked', async () => {
    const id = await startConversation(7501);
    expect((await choose(id, { model: 'switchboard-sim' })).body.conversation).toMatchObject({ model: 'switchboard-sim', modelFallback: false });
    await send(7501, 'c7501:fail-alone');
    expect((await system.waitForTelegram(7501, 2))[1]?.text).toBe(failedNotice);
    // The chosen model's own retries still apply (MODEL_MAX_RETRIES=1: two tries); no other model is asked.
    expect((await requestsAt(system.simUrl, 'c7501:fail-alone')).map((r) => r.status)).toEqual([500, 500]);
    expect(await requestsAt(fallbackUrl, 'c7501:fail-alone')).toEqual([]);
    expect(await lastTurn(7501)).toMatchObject({ status: 'failed', model: 'switchboard-sim' });
  });

  it('the same with fallback allowed: the fallback answers', async () => {
    const id = await conversationOf(7501);
    expect((await choose(id, { model: 'switchboard-sim', fallback: true })).body.conversation).toMatchObject({ model: 'switchboard-sim', modelFallback: true });
    await send(7501, 'c7501:fail-then-fallback');
    expect((await system.waitForTelegram(7501, 3))[2]?.text).toBe('fallback: c7501:fail-then-fallback');
    expect((await requestsAt(system.simUrl, 'c7501:fail-then-fallback')).map((r) => r.status)).toEqual([500]);
    expect(modelsAsked(await requestsAt(fallbackUrl, 'c7501:fail-then-fallback'))).toEqual(['fallback-model']);
    expect(await lastTurn(7501)).toMatchObject({ status: 'completed', model: 'fallback-model' });
  });

  it('pinned to the fallback model: it answers first while the primary is healthy; a bad body changes nothing; null goes back to the primary', async () => {
    const id = await startConversation(7502);
    expect((await choose(id, { model: 'fallback-model' })).status).toBe(200);
    await send(7502, 'c7502:pinned');
    expect((await system.waitForTelegram(7502, 2))[1]?.text).toBe('fallback: c7502:pinned');
    expect(await requestsAt(system.simUrl, 'c7502:pinned')).toEqual([]);
    expect(await lastTurn(7502)).toMatchObject({ status: 'completed', model: 'fallback-model' });

    for (const body of [{ fallback: true }, { model: '' }, { model: 'two words' }, { model: 'm', extra: true }]) {
      const bad = await choose(id, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body).toMatchObject({ error: 'INVALID_REQUEST' });
    }
    const detail = await adminRequest<{ conversation: { model: string | null; modelFallback: boolean } }>(system.gateway.url, 'GET', `/admin/conversations/${id}`);
    expect(detail.body.conversation).toMatchObject({ model: 'fallback-model', modelFallback: false });

    expect((await choose(id, { model: null })).body.conversation).toMatchObject({ model: null, modelFallback: false });
    await send(7502, 'c7502:cleared');
    expect((await system.waitForTelegram(7502, 3))[2]?.text).toBe('echo: c7502:cleared');
    expect(await requestsAt(fallbackUrl, 'c7502:cleared')).toEqual([]);
    expect(await lastTurn(7502)).toMatchObject({ status: 'completed', model: 'switchboard-sim' });
  });

  it('a chosen model no configured endpoint serves: one failure notice, MODEL_NOT_CONFIGURED, no model asked', async () => {
    const id = await startConversation(7503);
    expect((await choose(id, { model: 'nobody-serves-this', fallback: true })).status).toBe(200);
    await send(7503, 'c7503:ask');
    expect((await system.waitForTelegram(7503, 2))[1]?.text).toBe(failedNotice);
    expect(await requestsAt(system.simUrl, 'c7503:ask')).toEqual([]);
    expect(await requestsAt(fallbackUrl, 'c7503:ask')).toEqual([]);
    expect(await lastTurn(7503)).toMatchObject({ status: 'failed', error: 'MODEL_NOT_CONFIGURED' });
    // The worker is fine: the next message, with the choice cleared, is answered.
    await choose(id, { model: null });
    await send(7503, 'c7503:again');
    expect((await system.waitForTelegram(7503, 3))[2]?.text).toBe('echo: c7503:again');
  });
});

async function postJson(url: string, body: unknown): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
}
