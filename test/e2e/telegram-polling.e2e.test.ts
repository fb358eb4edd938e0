import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig } from '@switchboard/config';
import { startGateway, type RunningGateway } from '@switchboard/gateway';
import { botToken, TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

describe('Telegram long polling', () => {
  let system: TestSystem;
  let second: RunningGateway;

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { TELEGRAM_MODE: 'polling' }, workerEnv: { BUSY_INPUT_MODE: 'queue' } });
    // A second gateway process for the same bot: only one may poll.
    second = await startGateway(
      parseConfig(gatewayEnvSchema, {
        DATABASE_URL: system.databaseUrl,
        REDIS_URL: redisUrl(),
        REDIS_PREFIX: system.redisPrefix,
        LOG_LEVEL: 'warn',
        PORT: '0',
        TELEGRAM_BOT_TOKEN: botToken,
        TELEGRAM_API_ROOT: system.simUrl,
        TELEGRAM_MODE: 'polling',
      }),
    );
  });
  afterAll(async () => {
    await second?.close();
    await system?.close();
  });

  it('takes updates through getUpdates with one poller for two gateways, answering each message once, in order', async () => {
    for (let i = 0; i < 5; i++) {
      await system.sendTelegram({ chatId: 901, text: `polled ${i}` });
    }
    const replies = await system.waitForTelegram(901, 5);
    expect(replies.map((r) => r.text)).toEqual([0, 1, 2, 3, 4].map((i) => `echo: polled ${i}`));
    await system.sendTelegram({ chatId: 901, text: '/status' });
    const all = await system.waitForTelegram(901, 6);
    expect(all.at(-1)?.text).toMatch(/^Session \d+: 10 messages/);
    const [events] = await system.sql<{ n: number; distinct: number }[]>`
      select count(*)::int as n, count(distinct event_id)::int as distinct from inbound_events`;
    expect(events).toEqual({ n: 6, distinct: 6 });
  });
});
