import { createPublicKey, verify } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DiscordAPIError, HTTPError, RateLimitError, REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSim, type DiscordSentRecord, type Sim } from './index.ts';

const token = 'sim-discord-token';
const applicationId = '1200000000000000001';

let sim: Sim;
let baseUrl: string;

function client(options: { rejectOnRateLimit?: boolean; retries?: number } = {}): REST {
  return new REST({ api: `${baseUrl}/api`, version: '10', retries: options.retries ?? 0, ...(options.rejectOnRateLimit ? { rejectOnRateLimit: () => true } : {}) }).setToken(token);
}

async function control(path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function caught(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => undefined,
    (error: unknown) => error,
  );
}

beforeAll(async () => {
  sim = await createSim({ discordBotToken: token, discordApplicationId: applicationId, logLevel: 'silent' });
  baseUrl = await sim.listen(0);
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => sim.reset());

describe('Discord REST through @discordjs/rest', () => {
  it('GET /gateway/bot points at the sim gateway; GET /users/@me is the bot, sharing the application id', async () => {
    const rest = client();
    const info = (await rest.get(Routes.gatewayBot())) as { url: string; shards: number; session_start_limit: { remaining: number; max_concurrency: number } };
    expect(info.url).toBe(`${baseUrl.replace('http://', 'ws://')}/discord-gateway`);
    expect(info.shards).toBe(1);
    expect(info.session_start_limit).toMatchObject({ remaining: 1000, max_concurrency: 1 });
    expect(await rest.get(Routes.user('@me'))).toMatchObject({ id: applicationId, bot: true });
  });

  it('answers another token with 401 in Discord error JSON', async () => {
    const error = await caught(new REST({ api: `${baseUrl}/api`, retries: 0 }).setToken('wrong').get(Routes.gatewayBot()));
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect((error as DiscordAPIError).status).toBe(401);
    const raw = await fetch(`${baseUrl}/api/v10/users/@me`);
    expect(raw.status).toBe(401);
    expect(await raw.json()).toEqual({ message: '401: Unauthorized', code: 0 });
  });

  it('creates messages with rate-limit headers and records them', async () => {
    const message = (await client().post(Routes.channelMessages('300'), { body: { content: 'hello' } })) as { id: string; channel_id: string; author: { bot: boolean } };
    expect(message).toMatchObject({ channel_id: '300', content: 'hello', author: { id: applicationId, bot: true }, type: 0 });
    const raw = await fetch(`${baseUrl}/api/v10/channels/300/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'again' }),
    });
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-reset-after', 'x-ratelimit-bucket']) {
      expect(raw.headers.get(header), header).not.toBeNull();
    }
    expect(raw.headers.get('x-ratelimit-remaining')).toBe('3');
    const { json } = await control('/control/discord/sent?channel_id=300');
    expect((json as DiscordSentRecord[]).map((record) => record.content)).toEqual(['hello', 'again']);
    expect(BigInt((json as DiscordSentRecord[])[1]!.id)).toBeGreaterThan(BigInt(message.id));
  });

  it('returns the existing message for a repeated nonce with enforce_nonce, recording one', async () => {
    const rest = client();
    const body = { content: 'once', nonce: 'sb42', enforce_nonce: true };
    const first = (await rest.post(Routes.channelMessages('301'), { body })) as { id: string; nonce: string };
    const second = (await rest.post(Routes.channelMessages('301'), { body })) as { id: string };
    expect(second.id).toBe(first.id);
    expect(first.nonce).toBe('sb42');
    // Discord dedupes per author, not per channel: the bot's nonce in another channel is the same nonce.
    const elsewhere = (await rest.post(Routes.channelMessages('302'), { body })) as { id: string; channel_id: string };
    expect(elsewhere).toMatchObject({ id: first.id, channel_id: '301' });
    expect(((await control('/control/discord/sent?channel_id=301')).json as DiscordSentRecord[]).length).toBe(1);
    expect(((await control('/control/discord/sent?channel_id=302')).json as DiscordSentRecord[]).length).toBe(0);
    // Without enforce_nonce a repeat is a new message.
    const loose = (await rest.post(Routes.channelMessages('301'), { body: { content: 'again', nonce: 'sb42' } })) as { id: string };
    expect(loose.id).not.toBe(first.id);
  });

  it('rejects over-long content, empty content, long nonces and unknown replies with Discord errors', async () => {
    const rest = client();
    const long = await caught(rest.post(Routes.channelMessages('303'), { body: { content: 'x'.repeat(2001) } }));
    expect(long).toBeInstanceOf(DiscordAPIError);
    expect((long as DiscordAPIError).status).toBe(400);
    expect((long as DiscordAPIError).code).toBe(50035);
    expect((long as DiscordAPIError).rawError).toMatchObject({ errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } });
    expect(await rest.post(Routes.channelMessages('3031'), { body: { content: '😀'.repeat(2000) } })).toMatchObject({ channel_id: '3031' });
    expect(((await caught(rest.post(Routes.channelMessages('3032'), { body: { content: '' } }))) as DiscordAPIError).code).toBe(50006);
    expect(((await caught(rest.post(Routes.channelMessages('3033'), { body: { content: 'x', nonce: 'n'.repeat(26) } }))) as DiscordAPIError).code).toBe(50035);
    const unknown = await caught(rest.post(Routes.channelMessages('3034'), { body: { content: 'x', message_reference: { message_id: '999' } } }));
    expect((unknown as DiscordAPIError).rawError).toMatchObject({ errors: { message_reference: { _errors: [{ code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE' }] } } });
    const tolerant = await rest.post(Routes.channelMessages('3034'), { body: { content: 'x', message_reference: { message_id: '999', fail_if_not_exists: false } } });
    expect(tolerant).toMatchObject({ type: 19, message_reference: { message_id: '999' } });
  });

  it('records typing with 204', async () => {
    await client().post(Routes.channelTyping('304'));
    const { json } = await control('/control/discord/typing?channel_id=304');
    expect(json).toEqual([{ channel_id: '304', at: expect.any(Number) }]);
  });

  it('answers an armed 429 as Discord does, which @discordjs/rest reads as a RateLimitError', async () => {
    await control('/control/discord/faults', { route: 'messages', kind: '429', times: 2, retryAfter: 2 });
    const raw = await fetch(`${baseUrl}/api/v10/channels/305/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'limited' }),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get('retry-after')).toBe('2');
    expect(raw.headers.get('x-ratelimit-scope')).toBe('user');
    expect(raw.headers.get('x-ratelimit-global')).toBeNull();
    expect(await raw.json()).toEqual({ message: 'You are being rate limited.', retry_after: 2, global: false });
    const error = await caught(client({ rejectOnRateLimit: true }).post(Routes.channelMessages('305'), { body: { content: 'limited' } }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).toBeGreaterThanOrEqual(2000);
    expect((await control('/control/discord/sent?channel_id=305')).json).toEqual([]);
  });

  it('answers an armed 500 and delays, then works again', async () => {
    await control('/control/discord/faults', { route: 'messages', kind: '500' });
    expect(await caught(client().post(Routes.channelMessages('306'), { body: { content: 'x' } }))).toBeInstanceOf(HTTPError);
    await control('/control/discord/faults', { route: '*', kind: 'delay', delayMs: 150 });
    const startedAt = Date.now();
    await client().post(Routes.channelMessages('306'), { body: { content: 'late' } });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(140);
  });

  it('enforces the per-channel bucket: the sixth message in the window is a 429 the client sees coming', async () => {
    const rest = client({ rejectOnRateLimit: true });
    for (let i = 0; i < 5; i++) await rest.post(Routes.channelMessages('307'), { body: { content: `m${i}` } });
    const error = await caught(rest.post(Routes.channelMessages('307'), { body: { content: 'm5' } }));
    expect(error).toBeInstanceOf(RateLimitError);
    await rest.post(Routes.channelMessages('308'), { body: { content: 'other channel' } });
  });

  describe('interactions', () => {
    let endpoint: Server;
    let endpointUrl: string;
    let answer: unknown = { type: 5 };
    const seen: { verified: boolean; body: { type: number; token: string; data?: { name: string; options?: unknown[] } } }[] = [];

    beforeAll(async () => {
      endpoint = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const raw = Buffer.concat(chunks);
          const signature = request.headers['x-signature-ed25519'];
          const timestamp = request.headers['x-signature-timestamp'];
          const publicKeyHex = sim.state.discord.store.publicKeyHex;
          const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyHex, 'hex').toString('base64url') }, format: 'jwk' });
          const verified =
            typeof signature === 'string' && typeof timestamp === 'string' && verify(null, Buffer.concat([Buffer.from(timestamp), raw]), key, Buffer.from(signature, 'hex'));
          const body = JSON.parse(raw.toString()) as (typeof seen)[number]['body'];
          seen.push({ verified, body });
          if (!verified) return response.writeHead(401).end('bad signature');
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body.type === 1 ? { type: 1 } : answer));
        });
      });
      await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
      endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/interactions`;
    });
    afterAll(async () => {
      await new Promise((resolve) => endpoint.close(resolve));
    });
    beforeEach(async () => {
      seen.length = 0;
      answer = { type: 5 };
      await control('/control/discord/config', { interactions_url: endpointUrl });
    });

    it('exposes the public key that verifies its signatures, and sends bad ones on request', async () => {
      const { json: key } = await control('/control/discord/public-key');
      expect(key).toEqual({ public_key: expect.stringMatching(/^[0-9a-f]{64}$/), application_id: applicationId });
      const ping = await control('/control/discord/interactions', { ping: true, channel_id: '1', user: { id: '2', username: 'ada' } });
      expect(ping.json).toMatchObject({ status: 200, body: { type: 1 } });
      const bad = await control('/control/discord/interactions', { name: 'help', channel_id: '1', user: { id: '2', username: 'ada' }, signing: 'bad' });
      expect(bad.json).toMatchObject({ status: 401 });
      expect(seen.map((entry) => entry.verified)).toEqual([true, false]);
    });

    it('sends a command with options; after a deferred answer the reply edits @original, and follow-ups are new messages', async () => {
      const { json } = await control('/control/discord/interactions', {
        name: 'busy',
        options: [{ name: 'mode', value: 'queue' }],
        channel_id: '310',
        guild_id: '900',
        user: { id: '2', username: 'ada' },
      });
      const result = json as { status: number; body: unknown; interaction: { token: string } };
      expect(result).toMatchObject({ status: 200, body: { type: 5 } });
      expect(seen[0]?.body).toMatchObject({ type: 2, data: { name: 'busy', options: [{ name: 'mode', type: 3, value: 'queue' }] }, guild_id: '900', member: { user: { id: '2' } } });
      const rest = client();
      const route = Routes.webhookMessage(applicationId, result.interaction.token, '@original');
      await rest.patch(route, { auth: false, body: { content: 'Busy mode is now queue.' } });
      await rest.patch(route, { auth: false, body: { content: 'Busy mode is now queue.' } });
      await rest.post(Routes.webhook(applicationId, result.interaction.token), { auth: false, body: { content: 'and one more thing' } });
      const sent = (await control('/control/discord/sent?channel_id=310')).json as DiscordSentRecord[];
      expect(sent.map((record) => [record.content, record.followup, record.original ?? false, record.edits ?? 0])).toEqual([
        ['Busy mode is now queue.', true, true, 1],
        ['and one more thing', true, false, 0],
      ]);
      const unknown = await caught(rest.patch(Routes.webhookMessage(applicationId, 'no-such-token', '@original'), { auth: false, body: { content: 'x' } }));
      expect((unknown as DiscordAPIError).code).toBe(10015);
    });

    it('records a type 4 answer as the original response', async () => {
      answer = { type: 4, data: { content: 'Here is the help.' } };
      await control('/control/discord/interactions', { name: 'help', channel_id: '311', user: { id: '2', username: 'ada' } });
      const { json } = await control('/control/discord/wait?channel_id=311&count=1&timeout_ms=2000');
      expect(json).toMatchObject([{ content: 'Here is the help.', original: true }]);
    });
  });
});
