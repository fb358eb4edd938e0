import type postgres from 'postgres';
import type { PostgresServer, RedisServer } from '@switchboard/harness';
import type { SystemUnderTest } from '../bench/system-under-test.ts';

/** What the chaos run can break: the processes, the two services, and the simulator that plays the platforms and the model. */
export interface ChaosTarget {
  system: SystemUnderTest;
  postgres: PostgresServer;
  redis: RedisServer;
  /** Reads which worker runs turns right now (a worker kill aims at one mid-turn). */
  sql: postgres.Sql;
}
