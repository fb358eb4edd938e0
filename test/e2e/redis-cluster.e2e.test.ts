import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askRedisNode, startRedisCluster, type RedisCluster } from '@switchboard/harness';
import { eventsChannel } from '@switchboard/queue';
import { expectReplayKept, replayChats, type ReplayPlan } from '../support/replay-chats.ts';
import { checkRedis } from '../../scripts/lib/doctor-redis.ts';
import { TestSystem } from '../support/system.ts';
import { loadChat, transcript, waitForModelRequest, lastUserText } from '../support/turn-helpers.ts';

// Issue 33, points 1 and 5: a three-master Redis Cluster (six redis-server
// processes, `redis-cli --cluster create`), the gateway and two worker
// processes reaching it through REDIS_CLUSTER_NODES. BullMQ's keys share one
// hash slot, conversation leases spread over the masters, lifecycle events go
// over a sharded channel. One replay moves the queue's slot to another master
// mid-run (a resharding: ASK, TRYAGAIN, MOVED); another kills the master that
// holds the queue; its replica is promoted and nothing acknowledged is lost.

const longStory = { match: 'tell me a long story', replyRepeat: { text: 'once upon a time ', count: 400 }, chunkDelayMs: 15 };

describe('on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let system: TestSystem;
  let bullKey: string;

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    const onCluster = { REDIS_CLUSTER_NODES: cluster.nodesSetting };
    // Small enough that /compact of four long exchanges summarises some (as pgbouncer.e2e).
    system = await TestSystem.start({ workers: 2, workerProcesses: true, gatewayEnv: onCluster, workerEnv: { ...onCluster, MODEL_CONTEXT_TOKENS: '8000' } });
    await system.setModelScript({ rules: [longStory] });
    bullKey = `{${system.redisPrefix}}:bull:turns:meta`;
  }, 120_000);
  afterAll(async () => {
    await system?.close();
    await cluster?.destroy();
  });

  it('answers a Telegram message, with every BullMQ key in one hash slot and a lifecycle event on a sharded channel', async () => {
    const events: string[] = [];
    const listener = new Cluster(cluster.nodes.slice(0, 1).map((n) => ({ host: '127.0.0.1', port: n.port })), { shardedSubscribers: true });
    listener.on('smessage', (_channel: string, raw: string) => events.push((JSON.parse(raw) as { type: string }).type));
    await listener.ssubscribe(eventsChannel(system.redisPrefix));
    try {
      await system.sendTelegram({ chatId: 8_100_001, text: 'hello cluster' });
      expect((await system.waitForTelegram(8_100_001, 1, 30_000)).map((m) => m.text)).toEqual(['echo: hello cluster']);
      await expect.poll(() => events, { timeout: 10_000 }).toContain('turn.ended');
    } finally {
      listener.disconnect();
    }
    // Every key of the queue is on the one master that serves the prefix's hash tag; none lies outside it.
    const home = await cluster.masterOf(bullKey);
    for (const master of await cluster.masters()) {
      const keys = await askRedisNode(master.port, (c) => c.keys(`*${system.redisPrefix}*:bull:*`));
      if (master === home) expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(key.startsWith(`{${system.redisPrefix}}:bull:`), key).toBe(true);
      if (master !== home) expect(keys).toEqual([]);
    }
  }, 60_000);

  it("npm run doctor's redis line checks the cluster: every slot served, each master's eviction policy", async () => {
    const seen = await checkRedis({ REDIS_CLUSTER_NODES: cluster.nodesSetting });
    expect(seen.status, seen.detail).toBe('ok');
    expect(seen.detail).toMatch(/^Redis 7[\d.]+ at the cluster of 127\.0\.0\.1:\d+.*, maxmemory-policy noeviction$/);
    // A seed list naming no live node fails with the setting to fix.
    const none = await checkRedis({ REDIS_CLUSTER_NODES: '127.0.0.1:1' });
    expect(none.status).toBe('fail');
    expect(none.fix).toMatch(/REDIS_CLUSTER_NODES/);
  });

  it('interrupts a streaming turn when the next message arrives (the signal crosses the cluster)', async () => {
    const chatId = 8_100_002;
    await system.sendTelegram({ chatId, text: 'tell me a long story' });
    await waitForModelRequest(system, (r) => lastUserText(r) === 'tell me a long story', { what: 'the long story' });
    await system.sendTelegram({ chatId, text: 'actually, just say hi' });
    expect((await system.waitForTelegram(chatId, 1, 30_000)).map((m) => m.text)).toEqual(['echo: actually, just say hi']);
    await expect.poll(async () => (await loadChat(system, chatId)).turns.map((t) => t.status), { timeout: 10_000 }).toEqual(['interrupted', 'completed']);
    expect(transcript(await loadChat(system, chatId))).toEqual([
      ['user', 'tell me a long story'],
      ['user', 'actually, just say hi'],
      ['assistant', 'echo: actually, just say hi'],
    ]);
  }, 60_000);

  it('compresses on /compact', async () => {
    const chatId = 8_100_003;
    for (let i = 1; i <= 4; i++) {
      await system.sendTelegram({ chatId, text: `story ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(40)}` });
      await system.waitForTelegram(chatId, i, 30_000);
    }
    await system.sendTelegram({ chatId, text: '/compact' });
    expect((await system.waitForTelegram(chatId, 5, 30_000)).at(-1)?.text).toMatch(/^Done: \d+ older messages are now a summary\.$/);
    await system.sendTelegram({ chatId, text: 'after the summary' });
    expect((await system.waitForTelegram(chatId, 6, 30_000)).at(-1)?.text).toBe('echo: after the summary');
  }, 90_000);

  it("keeps every message of a replay, in order and once, while the queue's slot is resharded to another master (ASK, TRYAGAIN, then MOVED)", async () => {
    const from = await cluster.masterOf(bullKey);
    const to = (await cluster.masters()).find((m) => m !== from);
    if (!to) throw new Error('no other master');
    let moved = 0;
    const plan: ReplayPlan = {
      chats: Array.from({ length: 8 }, (_, i) => 8_150_001 + i),
      linesPerChat: 6,
      midway: { afterLine: 2, act: async () => void ({ movedKeys: moved } = await cluster.moveSlotOf(bullKey, to)) },
    };
    await replayChats(system, plan);
    await expectReplayKept(system, plan);
    expect(moved).toBeGreaterThan(0);
    expect(await cluster.masterOf(bullKey)).toBe(to);
  }, 240_000);

  it('keeps every message of a replay, in order and once, while the master holding the queue is killed and its replica takes over', async () => {
    const queueMaster = await cluster.masterOf(bullKey);
    let failoverMs = 0;
    const plan: ReplayPlan = {
      chats: Array.from({ length: 8 }, (_, i) => 8_200_001 + i),
      linesPerChat: 6,
      midway: {
        afterLine: 2,
        act: async () => {
          const killedAt = Date.now();
          await queueMaster.kill();
          await cluster.waitForFailover(queueMaster);
          failoverMs = Date.now() - killedAt;
        },
      },
    };
    await replayChats(system, plan);
    await expectReplayKept(system, plan);
    expect(failoverMs).toBeGreaterThan(0);
    expect(await cluster.masterOf(bullKey)).not.toBe(queueMaster);
  }, 240_000);
});
