import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { adminRequest, adminTokenEnv, aliceToken, openEventStream } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

describe('admin API: the live event stream', () => {
  let system: TestSystem;
  let base: string;
  let publisher: Redis;
  const channel = () => `${system.redisPrefix}:events`;
  const publish = (event: Record<string, unknown>) => publisher.publish(channel(), JSON.stringify({ at: new Date().toISOString(), ...event }));

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { ADMIN_TOKEN: adminTokenEnv } });
    base = system.gateway.url;
    publisher = new Redis(redisUrl());
  });
  afterAll(async () => {
    publisher?.disconnect();
    await system?.close();
  });

  it('listens to the lifecycle channel only while a client is connected, so turns without watchers cost the gateway nothing', async () => {
    const subscribers = async () => ((await publisher.pubsub('NUMSUB', channel())) as [string, number])[1];
    await system.sendTelegram({ chatId: 9400, text: 'nobody is watching' });
    await system.waitForTelegram(9400, 1);
    expect(await subscribers()).toBe(0);
    const stream = await openEventStream(base, { token: aliceToken });
    expect(await subscribers()).toBe(1);
    await system.sendTelegram({ chatId: 9400, text: 'now someone is' });
    await stream.waitFor((e) => e.type === 'turn.ended');
    stream.close();
    // The unsubscribe follows the socket's close with no event of its own to wait for: poll Redis.
    await expect.poll(subscribers, { timeout: 5000 }).toBe(0);
  });

  it('streams a turn’s lifecycle events in order', async () => {
    const stream = await openEventStream(base, { token: aliceToken });
    await system.sendTelegram({ chatId: 9401, text: 'hello events' });
    const ended = await stream.waitFor((e) => e.type === 'turn.ended');
    const [row] = await system.sql<{ id: string }[]>`select id from conversations where chat_id = '9401'`;
    const mine = stream.events.filter((e) => e.conversationId === Number(row?.id)).map((e) => e.type);
    expect(mine.indexOf('turn.started')).toBeGreaterThanOrEqual(0);
    expect(mine.indexOf('turn.started')).toBeLessThan(mine.indexOf('turn.ended'));
    expect(ended).toMatchObject({ outcome: 'completed', conversationId: Number(row?.id), turnId: expect.any(Number), at: expect.any(String) });
    stream.close();
  });

  it('delivers events in the order they were published', async () => {
    const stream = await openEventStream(base, { token: aliceToken });
    for (let seq = 1; seq <= 200; seq++) await publish({ type: 'turn.started', conversationId: 77_001, seq });
    await stream.waitFor((e) => e.seq === 200);
    expect(stream.events.filter((e) => e.conversationId === 77_001).map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    stream.close();
  });

  it('filters by conversation', async () => {
    const only = await openEventStream(base, { token: aliceToken, query: { conversation: '77002' } });
    const all = await openEventStream(base, { token: aliceToken });
    for (let seq = 1; seq <= 10; seq++) await publish({ type: 'turn.ended', conversationId: seq % 2 === 0 ? 77_002 : 77_003, seq });
    await all.waitFor((e) => e.seq === 10);
    await only.waitFor((e) => e.seq === 10);
    expect(only.events.map((e) => e.seq)).toEqual([2, 4, 6, 8, 10]);
    expect(all.events.filter((e) => e.conversationId === 77_003)).toHaveLength(5);
    only.close();
    all.close();
  });

  it('authenticates like the rest: header, ?token=, or the session cookie; 401 otherwise', async () => {
    await expect(openEventStream(base, { headers: { 'x-forwarded-for': '1.2.3.4' } })).rejects.toMatchObject({ statusCode: 401 });
    await expect(openEventStream(base, { token: 'wrong-token-wrong-token' })).rejects.toMatchObject({ statusCode: 401 });
    const viaQuery = await openEventStream(base, { query: { token: aliceToken } });
    viaQuery.close();
    const session = await adminRequest(base, 'POST', '/admin/session');
    const cookie = String(session.headers['set-cookie']).split(';')[0] as string;
    const viaCookie = await openEventStream(base, { headers: { cookie, origin: base } });
    viaCookie.close();
    await expect(openEventStream(base, { headers: { cookie, origin: 'http://evil.example' } })).rejects.toMatchObject({ statusCode: 403 });
    await expect(openEventStream(base, { token: aliceToken, query: { conversation: 'abc' } })).rejects.toMatchObject({ statusCode: 400 });
  });

  it('drops a client that stops reading (close 4008) without holding up the others', async () => {
    // The slow client's socket stops reading right after the upgrade; the kernel buffers fill, then ws's.
    let rawSocket: Socket | undefined;
    const slow = new WebSocket(`${base.replace(/^http/, 'ws')}/admin/events`, { headers: { authorization: `Bearer ${aliceToken}` } });
    slow.on('upgrade', (response) => {
      rawSocket = response.socket as Socket;
    });
    const greeted = new Promise<void>((resolve) => slow.once('message', () => resolve()));
    const slowClosed = new Promise<number>((resolve) => slow.on('close', (code) => resolve(code)));
    let slowCount = 0;
    slow.on('message', () => slowCount++);
    await greeted;
    rawSocket?.pause();

    const fast = await openEventStream(base, { token: aliceToken });
    const big = 'x'.repeat(64 * 1024);
    const total = 400; // ~25 MiB: far past the 1 MiB limit plus what the kernel buffers on loopback
    for (let seq = 1; seq <= total; seq++) await publish({ type: 'turn.ended', conversationId: 77_004, seq, reason: big });
    await fast.waitFor((e) => e.seq === total, 30_000);
    expect(fast.events.filter((e) => e.conversationId === 77_004)).toHaveLength(total);

    rawSocket?.resume();
    expect(await slowClosed).toBe(4008);
    expect(slowCount).toBeLessThan(total);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/switchboard_admin_event_clients_dropped_total\{reason="slow"\} 1/);
    fast.close();
  }, 60_000);

  it('announces operator actions on the stream', async () => {
    await system.sendTelegram({ chatId: 9402, text: 'hi' });
    await system.waitForTelegram(9402, 1);
    const [row] = await system.sql<{ id: string }[]>`select id from conversations where chat_id = '9402'`;
    const id = Number(row?.id);
    const stream = await openEventStream(base, { token: aliceToken, query: { conversation: String(id) } });
    await adminRequest(base, 'POST', `/admin/conversations/${id}/suspend`);
    await adminRequest(base, 'POST', `/admin/conversations/${id}/resume`);
    await adminRequest(base, 'POST', `/admin/conversations/${id}/reset`);
    await stream.waitFor((e) => e.type === 'session.started');
    // The suspension parks the session (the resume brings it back); only the reset finalizes it.
    expect(stream.events.map((e) => e.type)).toEqual(['conversation.suspended', 'session.parked', 'conversation.resumed', 'session.finalized', 'session.started']);
    stream.close();
  });
});
