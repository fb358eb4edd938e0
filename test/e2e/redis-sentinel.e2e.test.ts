import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisSentinelSet, type RedisSentinelSet } from '@switchboard/harness';
import { expectReplayKept, replayChats, type ReplayPlan } from '../support/replay-chats.ts';
import { checkRedis } from '../../scripts/lib/doctor-redis.ts';
import { TestSystem } from '../support/system.ts';

// Issue 33, points 2 and 5: Redis under Sentinel (one master, one replica,
// three sentinels with a quorum of two), the gateway and two worker processes
// reaching it through REDIS_SENTINELS and REDIS_SENTINEL_NAME. The master is
// killed mid-replay; the sentinels promote the replica, every client asks
// them for the new master, and nothing acknowledged is lost.
//
// Replication is asynchronous: a write acknowledged by the master in the last
// moment before it died may not have reached the replica. What must hold is
// what Postgres holds (docs/services.md, "Redis Cluster and Sentinel"): every
// acknowledged message is stored before it is acknowledged, and a wake-up
// lost with the old master is found again by the recovery sweep.

describe('on Redis under Sentinel', () => {
  let sentinels: RedisSentinelSet;
  let system: TestSystem;

  beforeAll(async () => {
    sentinels = await startRedisSentinelSet({ name: 'switchboard' });
    const underSentinel = { REDIS_SENTINELS: sentinels.sentinelsSetting, REDIS_SENTINEL_NAME: sentinels.name };
    system = await TestSystem.start({ workers: 2, workerProcesses: true, gatewayEnv: underSentinel, workerEnv: underSentinel });
  }, 120_000);
  afterAll(async () => {
    await system?.close();
    await sentinels?.destroy();
  });

  it("npm run doctor's redis line checks the master the sentinels name", async () => {
    const seen = await checkRedis({ REDIS_SENTINELS: sentinels.sentinelsSetting, REDIS_SENTINEL_NAME: sentinels.name });
    expect(seen.status, seen.detail).toBe('ok');
    expect(seen.detail).toMatch(/^Redis 7[\d.]+ at the master "switchboard" of sentinels 127\.0\.0\.1:\d+/);
    const unknown = await checkRedis({ REDIS_SENTINELS: sentinels.sentinelsSetting, REDIS_SENTINEL_NAME: 'nobody' });
    expect(unknown.status).toBe('fail');
    expect(unknown.fix).toMatch(/REDIS_SENTINELS and REDIS_SENTINEL_NAME/);
  });

  it('keeps every message of a replay, in order and once, while the master is killed and the sentinels promote its replica', async () => {
    const oldMaster = sentinels.master;
    expect(await sentinels.currentMasterPort()).toBe(oldMaster.port);
    let newMasterPort = 0;
    const plan: ReplayPlan = {
      chats: Array.from({ length: 8 }, (_, i) => 8_300_001 + i),
      linesPerChat: 6,
      midway: {
        afterLine: 2,
        act: async () => {
          await oldMaster.kill();
          newMasterPort = await sentinels.waitForFailover(oldMaster.port);
        },
      },
    };
    await replayChats(system, plan);
    await expectReplayKept(system, plan);
    expect(newMasterPort).toBe(sentinels.replica.port);
    // The system keeps working on the promoted master.
    await system.sendTelegram({ chatId: 8_300_100, text: 'after the failover' });
    expect((await system.waitForTelegram(8_300_100, 1, 30_000)).map((m) => m.text)).toEqual(['echo: after the failover']);
  }, 240_000);
});
