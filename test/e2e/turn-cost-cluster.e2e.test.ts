import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startRedisCluster, type PostgresServer, type RedisCluster } from '@switchboard/harness';
import { turnCostBudget } from '../budgets/turn-cost-budget.ts';
import { expectWithinBudget, measure, startCountingPostgres, type CostProbe } from '../support/cost-counters.ts';
import { TestSystem } from '../support/system.ts';
import { sendText, waitForIdle } from '../support/turn-helpers.ts';

/**
 * The budget of test/budgets/turn-cost-budget.ts on a Redis Cluster (issue
 * 33, "its cost is in the budget test"): the same ordinary turn, with the
 * same settings as turn-cost.e2e, costs exactly the statements, the Redis
 * commands (summed over the masters; a cluster client's own CLUSTER SLOTS
 * upkeep left out) and the platform call it costs on one Redis. A cluster
 * adds no round trip to a turn.
 */

const quiet = { HEARTBEAT_INTERVAL_MS: '600000', WORKER_DEAD_AFTER_MS: '1800000', SWEEP_INTERVAL_MS: '600000' };

describe('what one turn costs on a Redis Cluster', () => {
  let pgServer: PostgresServer;
  let cluster: RedisCluster;
  let system: TestSystem;
  let probe: CostProbe;
  let masters: Redis[] = [];

  beforeAll(async () => {
    let counting: Awaited<ReturnType<typeof startCountingPostgres>>;
    [counting, cluster] = await Promise.all([startCountingPostgres(), startRedisCluster()]);
    pgServer = counting.server;
    const { databaseUrl, pg } = counting;
    const onCluster = { ...quiet, REDIS_CLUSTER_NODES: cluster.nodesSetting };
    const env = { ...onCluster, STREAMING: 'on', STATUS_REACTIONS: 'on', STATUS_REACTION_AFTER_MS: '30000' };
    system = await TestSystem.start({ databaseUrl, workerEnv: env, gatewayEnv: onCluster });
    masters = (await cluster.masters()).map((m) => new Redis(m.port, '127.0.0.1'));
    probe = { pg, redis: masters, system };
  }, 90_000);
  afterAll(async () => {
    for (const master of masters) master.disconnect();
    await probe?.pg.end();
    await system?.close();
    await Promise.allSettled([pgServer?.destroy(), cluster?.destroy()]);
  });

  it('an ordinary turn costs what it costs on one Redis', async () => {
    await sendText(system, 9101, 'hello there');
    await system.waitForTelegram(9101, 1);
    await waitForIdle(system, [9101]);
    const counts = await measure(probe, async () => {
      await sendText(system, 9101, 'what a nice day');
      await system.waitForTelegram(9101, 2);
    });
    expectWithinBudget('ordinaryTurn', turnCostBudget.ordinaryTurn, counts);
  });
});
