import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv } from '../support/admin-client.ts';
import { discordApplicationId } from '../support/discord.ts';
import { TestSystem, webhookSecret } from '../support/system.ts';

// Issue 17, defects 8 and 9: malformed, stale or unexpected requests get a 4xx or a plain acknowledgement, never a 500 or a re-delivery loop.
describe('malformed admin and interaction requests', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ discord: true, gatewayEnv: { ADMIN_TOKEN: adminTokenEnv } });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('answers a session cookie that does not percent-decode with 401, and counts it against the address', async () => {
    const from = { token: null, headers: { cookie: 'sb_admin_session=%E0%A4%A' }, localAddress: '127.0.0.31' };
    for (let i = 0; i < 10; i++) {
      const answer = await adminRequest(system.gateway.url, 'GET', '/admin/whoami', from);
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ error: 'UNAUTHORIZED' });
    }
    // Counted: the address is now refused even with a right token, and only that address.
    expect((await adminRequest(system.gateway.url, 'GET', '/admin/whoami', { localAddress: '127.0.0.31' })).status).toBe(429);
    expect((await adminRequest(system.gateway.url, 'GET', '/admin/whoami', { localAddress: '127.0.0.32' })).status).toBe(200);
  });

  /** POSTs a body signed as the simulated Discord signs it (at `timestamp`, default now), straight to the gateway's Interactions Endpoint. */
  async function postSignedInteraction(body: string, timestamp = String(Math.floor(Date.now() / 1000))): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${system.gateway.url}/webhooks/discord/interactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature-ed25519': system.sim.state.discord.store.signInteraction(timestamp, body), 'x-signature-timestamp': timestamp },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  const interaction = (id: string, channelId: string, options: unknown[]) =>
    JSON.stringify({
      id,
      application_id: discordApplicationId,
      type: 2,
      token: `token-${id}`,
      channel_id: channelId,
      user: { id: '4000000000000000077', username: 'tester' },
      data: { name: 'help', options },
    });

  const storedIn = async (channelId: string) =>
    (await system.sql<{ n: number }[]>`select count(*)::int as n from conversations where platform = 'discord' and chat_id = ${channelId}`)[0]?.n ?? 0;

  it('answers a signed interaction with thousands of nested options with 400 and stores nothing', async () => {
    // Written as text: JSON.stringify itself recurses too deep for this.
    const levels = 8000;
    const nested = `${'{"name":"g","type":2,"options":['.repeat(levels)}{"name":"leaf","type":3,"value":"x"}${']}'.repeat(levels)}`;
    const body = interaction('1500000000000000001', '1500000000000000101', ['NESTED']).replace('"NESTED"', nested);
    const deep = await postSignedInteraction(body);
    expect(deep.status).toBe(400);
    expect(deep.body).toMatchObject({ error: 'INVALID_PAYLOAD' });
    expect(await storedIn('1500000000000000101')).toBe(0);
    // One level past Discord's three is refused too.
    const four = [{ name: 'a', type: 2, options: [{ name: 'b', type: 1, options: [{ name: 'c', type: 1, options: [{ name: 'd', type: 3, value: 'v' }] }] }] }];
    expect((await postSignedInteraction(interaction('1500000000000000002', '1500000000000000102', four))).status).toBe(400);
    expect(await storedIn('1500000000000000102')).toBe(0);
  });

  it('still takes a command with Discord’s full three levels: group, subcommand, option', async () => {
    const three = [{ name: 'grp', type: 2, options: [{ name: 'sub', type: 1, options: [{ name: 'opt', type: 3, value: 'v' }] }] }];
    const answer = await postSignedInteraction(interaction('1500000000000000003', '1500000000000000103', three));
    expect(answer).toMatchObject({ status: 200, body: { type: 5 } });
    expect(await storedIn('1500000000000000103')).toBe(1);
  });

  const metric = async (series: string) => {
    const line = (await (await fetch(`${system.gateway.url}/metrics`)).text()).split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };

  it('answers a rightly signed interaction whose timestamp is outside ±5 minutes with 401 and stores nothing', async () => {
    const unauthorizedBefore = await metric('switchboard_inbound_events_total{platform="discord",outcome="unauthorized"}');
    const nowSeconds = Math.floor(Date.now() / 1000);
    const stale = await postSignedInteraction(interaction('1500000000000000004', '1500000000000000104', []), String(nowSeconds - 6 * 60));
    expect(stale).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    const future = await postSignedInteraction(interaction('1500000000000000005', '1500000000000000105', []), String(nowSeconds + 6 * 60));
    expect(future.status).toBe(401);
    expect(await storedIn('1500000000000000104')).toBe(0);
    expect(await storedIn('1500000000000000105')).toBe(0);
    // Counted like any other bad signature.
    expect(await metric('switchboard_inbound_events_total{platform="discord",outcome="unauthorized"}')).toBe(unauthorizedBefore + 2);
    // The same command signed now is taken.
    const fresh = await postSignedInteraction(interaction('1500000000000000006', '1500000000000000104', []));
    expect(fresh).toMatchObject({ status: 200, body: { type: 5 } });
    expect(await storedIn('1500000000000000104')).toBe(1);
  });

  it('acknowledges a Telegram update from an unknown chat type, stores nothing, counts it, and answers the next message', async () => {
    const update = { update_id: 880001, message: { message_id: 1, date: Math.floor(Date.now() / 1000), chat: { id: 8801, type: 'weird' }, from: { id: 8801, is_bot: false, first_name: 'W' }, text: 'hello from nowhere' } };
    const response = await fetch(`${system.gateway.url}/webhooks/telegram`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': webhookSecret },
      body: JSON.stringify(update),
    });
    // A 4xx would make Telegram deliver it again and again.
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, ignored: 'unknown_chat_type' });
    const [stored] = await system.sql<{ n: number }[]>`
      select (select count(*) from inbound_events where platform = 'telegram' and event_id = '880001')
           + (select count(*) from conversations where platform = 'telegram' and chat_id = '8801')::int as n`;
    expect(Number(stored?.n)).toBe(0);
    expect(await metric('switchboard_inbound_rejected_total{platform="telegram",reason="unknown_chat_type"}')).toBe(1);

    await system.sendTelegram({ chatId: 8801, text: 'and now from a private chat' });
    const [reply] = await system.waitForTelegram(8801, 1);
    expect(reply?.text).toContain('and now from a private chat');
  });
});
