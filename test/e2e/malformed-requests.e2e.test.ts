import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv } from '../support/admin-client.ts';
import { discordApplicationId } from '../support/discord.ts';
import { TestSystem } from '../support/system.ts';

// Issue 17, defect 8: malformed unauthenticated requests get a 4xx, never a 500.
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

  /** POSTs a body signed as the simulated Discord signs it, straight to the gateway's Interactions Endpoint. */
  async function postSignedInteraction(body: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const timestamp = String(Math.floor(Date.now() / 1000));
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
});
