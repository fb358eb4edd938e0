import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSystem } from '../support/system.ts';

// Issue 19, order (found by the chaos run: a Slack line sent while Postgres
// restarted was stored 16 s later, after two lines the user sent after it).
// A store that cannot finish inside Slack's 3 s wait is refused with 503, so
// Slack's retry (or nothing) decides, never a store the platform gave up on.
describe('a Slack event whose store comes too late', () => {
  let system: TestSystem;
  const channel = 'D7300001';

  beforeAll(async () => {
    // The simulated Slack waits longer than the real one, so the test sees the gateway's late answer.
    system = await TestSystem.start({ slack: true, slackAckTimeoutMs: 15_000 });
    await system.setModelScript({ rules: [{ match: 'late line', reply: 'answer to the late line', times: 5 }] });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('is refused with 503 and not stored; the retry that follows is stored and answered once', async () => {
    // Postgres holds every insert into inbound_events for 4 s, past the gateway's 2.5 s store budget.
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const held = system.sql.begin(async (tx) => {
      await tx`lock table inbound_events in share row exclusive mode`;
      locked();
      await new Promise((resolve) => setTimeout(resolve, 4_000));
    });
    await lockTaken;
    const first = await system.sendSlack({ channel, text: 'late line', event_id: 'EvLate1', retryOnFailure: false });
    await held;
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({ ok: false, error: 'STORE_TOO_LATE' });
    expect(await system.sql`select 1 from inbound_events where event_id = 'EvLate1'`).toHaveLength(0);

    const retry = await system.sendSlack({ channel, text: 'late line', event_id: 'EvLate1', retryNum: 1, retryReason: 'http_error' });
    expect(retry.status).toBe(200);
    const [reply] = await system.waitForSlack(channel, 1);
    expect(reply?.text).toBe('answer to the late line');
    expect(await system.sql`select 1 from inbound_events where event_id = 'EvLate1'`).toHaveLength(1);
  }, 60_000);
});
