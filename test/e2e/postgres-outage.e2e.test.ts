import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '@switchboard/db';
import { startPostgres, type PostgresServer } from '@switchboard/harness';
import { postJson, TestSystem } from '../support/system.ts';

// This file stops its database, so it runs its own Postgres rather than the shared one.
describe('Telegram webhook while Postgres is down', () => {
  let pg: PostgresServer;
  let system: TestSystem;

  beforeAll(async () => {
    pg = await startPostgres();
    await migrateDatabase(pg.adminUrl);
    system = await TestSystem.start({ databaseUrl: pg.adminUrl });
  });
  afterAll(async () => {
    await system?.close();
    await pg?.destroy();
  });

  it('answers 503 so Telegram retries, then answers the retry once after Postgres is back', async () => {
    await system.sendTelegram({ chatId: 601, text: 'before the outage' });
    await system.waitForTelegram(601, 1);

    await pg.stop();
    const during = await system.sendTelegram({ chatId: 601, text: 'sent during the outage' });
    expect(during.status).toBe(503);
    const ready = await fetch(`${system.gateway.url}/readyz`);
    expect(ready.status).toBe(503);

    await pg.start();
    const redelivered = (await postJson(`${system.simUrl}/control/telegram/redeliver`, { update_id: during.updateId })) as { status: number }[];
    expect(redelivered.map((r) => r.status)).toEqual([200]);
    await system.waitForTelegram(601, 2);
    // A later message's reply comes right after, so a second answer to the retry would show up in between.
    await system.sendTelegram({ chatId: 601, text: 'after the outage' });
    const replies = await system.waitForTelegram(601, 3);
    expect(replies.map((r) => r.text)).toEqual(['echo: before the outage', 'echo: sent during the outage', 'echo: after the outage']);
  });
});
