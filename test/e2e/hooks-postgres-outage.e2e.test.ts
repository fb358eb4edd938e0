import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '@switchboard/db';
import { startPostgres, type PostgresServer } from '@switchboard/harness';
import { callHook, createConversation, writeHooksFile } from '../support/hooks.ts';
import { TestSystem } from '../support/system.ts';

// Issue 34, triggered turns: never acknowledge what was not stored (DESIGN §4). This file stops its database, so it
// runs its own Postgres rather than the shared one.
describe('POST /hooks/{name} while Postgres is down', () => {
  const secret = 'outage-hook-secret-0123456789';
  let pg: PostgresServer;
  let system: TestSystem;

  beforeAll(async () => {
    pg = await startPostgres();
    await migrateDatabase(pg.adminUrl);
    const conversationId = await createConversation(pg.adminUrl, { platform: 'telegram', accountId: '123456', chatId: '611', threadId: '', userScope: '' });
    system = await TestSystem.start({ databaseUrl: pg.adminUrl, gatewayEnv: { HOOKS_FILE: writeHooksFile({ ops: { secret, conversationId, prompt: 'Ops: {{body}}' } }) } });
  });
  afterAll(async () => {
    await system?.close();
    await pg?.destroy();
  });

  it('answers 503 while Postgres is down, then the retry of the same delivery is stored and answered once', async () => {
    const call = { name: 'ops', secret, body: 'disk full', deliveryId: 'outage-1' };
    await pg.stop();
    const during = await callHook(system.gateway.url, call);
    expect(during).toEqual({ status: 503, body: { ok: false, error: 'STORE_FAILED' } });

    await pg.start();
    expect((await callHook(system.gateway.url, call)).body.outcome).toBe('accepted');
    await system.waitForTelegram(611, 1);
    expect((await callHook(system.gateway.url, call)).body.outcome).toBe('duplicate');
    // A later call's reply comes right after, so a second answer to the retried delivery would show up in between.
    await callHook(system.gateway.url, { ...call, body: 'after', deliveryId: 'outage-2' });
    const replies = await system.waitForTelegram(611, 2);
    expect(replies.map((r) => r.text)).toEqual(['echo: Ops: disk full', 'echo: Ops: after']);
  });
});
