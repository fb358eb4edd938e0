import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createSim, type DiscordGatewayState, type Sim } from './index.ts';

const token = 'sim-gateway-token';

interface Payload {
  op: number;
  d: unknown;
  s: number | null;
  t: string | null;
}

/** A bare protocol client: it only records what arrives and sends what the test says. */
class RawClient {
  readonly received: Payload[] = [];
  closeCode: number | undefined;
  private readonly ws: WebSocket;
  private waiters: (() => void)[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<number>;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) =>
      this.ws.once('close', (code) => {
        this.closeCode = code;
        resolve(code);
        this.notify();
      }),
    );
    this.ws.on('message', (data) => {
      this.received.push(JSON.parse(data.toString()) as Payload);
      this.notify();
    });
  }

  send(payload: unknown): void {
    this.ws.send(typeof payload === 'string' ? payload : JSON.stringify(payload));
  }

  close(code: number): Promise<number> {
    this.ws.close(code);
    return this.closed;
  }

  /** Resolves with the first received payload (after `from`) that matches. */
  async next(match: (payload: Payload) => boolean, from = 0, timeoutMs = 3000): Promise<Payload> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.slice(from).find(match);
      if (found) return found;
      if (this.closeCode !== undefined) throw new Error(`closed with ${this.closeCode} while waiting`);
      if (Date.now() > deadline) throw new Error(`timed out; received ${JSON.stringify(this.received.map((p) => [p.op, p.t, p.s]))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 5);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  dispatches(t: string): Payload[] {
    return this.received.filter((p) => p.op === 0 && p.t === t);
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

let sim: Sim;
let baseUrl: string;
let gatewayUrl: string;
const clients: RawClient[] = [];

async function control(path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function connect(url = gatewayUrl): Promise<RawClient> {
  const client = new RawClient(`${url}${url.includes('?') ? '&' : '?'}v=10&encoding=json`);
  clients.push(client);
  await client.opened;
  return client;
}

async function identify(): Promise<{ client: RawClient; ready: { session_id: string; resume_gateway_url: string; user: { id: string }; application: { id: string } }; readySeq: number }> {
  const client = await connect();
  await client.next((p) => p.op === 10);
  client.send({ op: 2, d: { token, intents: 512 | 4096 | 32768, properties: { os: 'linux', browser: 'test', device: 'test' } } });
  const ready = await client.next((p) => p.op === 0 && p.t === 'READY');
  return { client, ready: ready.d as never, readySeq: ready.s as number };
}

async function userMessage(channelId: string, content: string, extra: Record<string, unknown> = {}) {
  const { json } = await control('/control/discord/messages', { channel_id: channelId, author: { id: '42', username: 'ada' }, content, ...extra });
  return json as { message: { id: string }; s: number | null; delivered: boolean; queued: boolean; session_id: string | null };
}

beforeAll(async () => {
  sim = await createSim({ discordBotToken: token, discordHeartbeatIntervalMs: 200, logLevel: 'silent' });
  baseUrl = await sim.listen(0);
  const { json } = await control('/control/health');
  expect(json).toEqual({ ok: true });
  gatewayUrl = `${baseUrl.replace('http://', 'ws://')}/discord-gateway`;
});
afterEach(async () => {
  // Each test starts without a live session: close with 1000, which ends it.
  for (const client of clients.splice(0)) if (client.closeCode === undefined) await client.close(1000);
});
afterAll(async () => {
  await sim.close();
});

describe('Discord Gateway over a raw WebSocket', () => {
  it('says Hello with the heartbeat interval, answers Identify with READY and heartbeats with ACKs', async () => {
    const client = await connect();
    expect(await client.next((p) => p.op === 10)).toEqual({ op: 10, d: { heartbeat_interval: 200 }, s: null, t: null });
    client.send({ op: 2, d: { token, intents: 37376, properties: { os: 'linux', browser: 'test', device: 'test' } } });
    const ready = await client.next((p) => p.t === 'READY');
    expect(ready.s).toBe(1);
    expect(ready.d).toMatchObject({
      v: 10,
      user: { id: '1100000000000000001', bot: true },
      guilds: [],
      session_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      resume_gateway_url: `${gatewayUrl}?resume=1`,
      application: { id: '1100000000000000001' },
    });
    client.send({ op: 1, d: 1 });
    expect(await client.next((p) => p.op === 11)).toEqual({ op: 11, d: null, s: null, t: null });
    const { json: state } = await control('/control/discord/gateway');
    expect(state).toMatchObject({ connected: true, acks_stopped: false, session_id: (ready.d as { session_id: string }).session_id });
  });

  it('dispatches MESSAGE_CREATE with increasing sequence numbers and the message shape', async () => {
    const { client, readySeq } = await identify();
    const dm = await userMessage('500', 'hello there');
    const guild = await userMessage('501', 'hey bot', { guild_id: '600', mentions_bot: true });
    const events = [await client.next((p) => p.t === 'MESSAGE_CREATE'), await client.next((p) => p.t === 'MESSAGE_CREATE' && p.s === readySeq + 2)];
    expect(events.map((e) => e.s)).toEqual([readySeq + 1, readySeq + 2]);
    expect(dm).toMatchObject({ delivered: true, s: readySeq + 1 });
    expect(events[0]?.d).toMatchObject({ id: dm.message.id, channel_id: '500', author: { id: '42', username: 'ada' }, content: 'hello there', mentions: [], type: 0, channel_type: 1 });
    expect(events[0]?.d).not.toHaveProperty('guild_id');
    expect(events[1]?.d).toMatchObject({ id: guild.message.id, guild_id: '600', mentions: [{ id: '1100000000000000001', bot: true }], channel_type: 0 });
  });

  it('answers a server heartbeat request and tracks heartbeats', async () => {
    const { client } = await identify();
    const before = client.received.length;
    await control('/control/discord/gateway', { action: 'request-heartbeat' });
    expect(await client.next((p) => p.op === 1, before)).toMatchObject({ op: 1 });
  });

  it('replays what a closed connection missed on Resume, then sends RESUMED', async () => {
    const { client, ready, readySeq } = await identify();
    const seen = await userMessage('510', 'seen');
    await client.next((p) => p.t === 'MESSAGE_CREATE');
    await client.close(4000);
    const missed = [await userMessage('510', 'missed one'), await userMessage('510', 'missed two')];
    expect(missed.map((m) => m.delivered)).toEqual([false, false]);
    const resumed = await connect(ready.resume_gateway_url);
    await resumed.next((p) => p.op === 10);
    resumed.send({ op: 6, d: { token, session_id: ready.session_id, seq: seen.s } });
    await resumed.next((p) => p.t === 'RESUMED');
    expect(resumed.dispatches('MESSAGE_CREATE').map((p) => [p.s, (p.d as { content: string }).content])).toEqual([
      [readySeq + 2, 'missed one'],
      [readySeq + 3, 'missed two'],
    ]);
    const { json } = await control('/control/discord/gateway/wait?resumes=1&connected=true&timeout_ms=1000');
    expect((json as DiscordGatewayState).session_id).toBe(ready.session_id);
  });

  it('stops ACKing and delivering on stop-acks, and a resume after the client gives up replays everything', async () => {
    const { client, ready } = await identify();
    await control('/control/discord/gateway', { action: 'stop-acks' });
    expect(((await control('/control/discord/gateway')).json as DiscordGatewayState).acks_stopped).toBe(true);
    const before = client.received.length;
    client.send({ op: 1, d: null });
    const lost = await userMessage('520', 'into the void');
    expect(lost.delivered).toBe(false);
    // Two heartbeat intervals with neither an ACK nor the dispatch.
    await expect(client.next((p) => p.op === 11 || p.t === 'MESSAGE_CREATE', before, 450)).rejects.toThrow(/timed out/);
    await client.close(4000);
    const resumed = await connect(ready.resume_gateway_url);
    await resumed.next((p) => p.op === 10);
    resumed.send({ op: 6, d: { token, session_id: ready.session_id, seq: (lost.s as number) - 1 } });
    await resumed.next((p) => p.t === 'RESUMED');
    expect(resumed.dispatches('MESSAGE_CREATE').map((p) => (p.d as { content: string }).content)).toEqual(['into the void']);
    resumed.send({ op: 1, d: lost.s });
    await resumed.next((p) => p.op === 11);
  });

  it('replays from an earlier sequence after a drop with replay_from, as when Discord resends stored events', async () => {
    const { client, ready } = await identify();
    const first = await userMessage('530', 'first');
    await client.next((p) => p.t === 'MESSAGE_CREATE');
    await control('/control/discord/gateway', { action: 'drop', replay_from: (first.s as number) - 1 });
    expect(await client.closed).toBe(1006);
    const resumed = await connect(ready.resume_gateway_url);
    await resumed.next((p) => p.op === 10);
    resumed.send({ op: 6, d: { token, session_id: ready.session_id, seq: first.s } });
    await resumed.next((p) => p.t === 'RESUMED');
    expect(resumed.dispatches('MESSAGE_CREATE').map((p) => (p.d as { id: string }).id)).toEqual([first.message.id]);
  });

  it('sends op 7 on reconnect and op 9 on invalid-session; an invalidated session cannot be resumed', async () => {
    const { client, ready } = await identify();
    await control('/control/discord/gateway', { action: 'reconnect' });
    expect(await client.next((p) => p.op === 7)).toMatchObject({ op: 7 });
    await control('/control/discord/gateway', { action: 'invalid-session' });
    expect(await client.next((p) => p.op === 9)).toMatchObject({ op: 9, d: false });
    await client.close(4000);
    const retry = await connect(ready.resume_gateway_url);
    await retry.next((p) => p.op === 10);
    retry.send({ op: 6, d: { token, session_id: ready.session_id, seq: 1 } });
    expect(await retry.next((p) => p.op === 9)).toMatchObject({ op: 9, d: false });
  });

  it('ends the session when the client closes with 1000', async () => {
    const { client, ready } = await identify();
    await client.close(1000);
    const retry = await connect(ready.resume_gateway_url);
    await retry.next((p) => p.op === 10);
    retry.send({ op: 6, d: { token, session_id: ready.session_id, seq: 1 } });
    expect(await retry.next((p) => p.op === 9)).toMatchObject({ d: false });
  });

  it('queues messages made while no session exists and delivers them after the next READY', async () => {
    const queued = await userMessage('540', 'waiting for you');
    expect(queued).toMatchObject({ queued: true, delivered: false, s: null });
    const { client, readySeq } = await identify();
    const event = await client.next((p) => p.t === 'MESSAGE_CREATE');
    expect(event.s).toBe(readySeq + 1);
    expect(event.d).toMatchObject({ id: queued.message.id, content: 'waiting for you' });
  });

  it('closes with 4004 on a wrong token, 4002 on an oversized or undecodable payload, 4003 before identify, and on command', async () => {
    const wrong = await connect();
    await wrong.next((p) => p.op === 10);
    wrong.send({ op: 2, d: { token: 'nope', intents: 512, properties: {} } });
    expect(await wrong.closed).toBe(4004);
    const big = await connect();
    big.send({ op: 2, d: { token, intents: 512, properties: { os: 'x'.repeat(5000) } } });
    expect(await big.closed).toBe(4002);
    const garbage = await connect();
    garbage.send('{not json');
    expect(await garbage.closed).toBe(4002);
    const early = await connect();
    early.send({ op: 3, d: {} });
    expect(await early.closed).toBe(4003);
    const { client } = await identify();
    await control('/control/discord/gateway', { action: 'close', code: 4014 });
    expect(await client.closed).toBe(4014);
  });
});
