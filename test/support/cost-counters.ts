import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type postgres from 'postgres';
import type { TestSystem } from './system.ts';

/** What one user action cost: SQL statements by query, Redis commands by name, platform and model calls by method. */
export interface CostCounts {
  statements: Record<string, number>;
  redis: Record<string, number>;
  platform: Record<string, number>;
  modelRequests: number;
}

export interface CostProbe {
  /** A superuser connection to the system's database, with pg_stat_statements created in it. */
  pg: postgres.Sql;
  /** A client of the system's own Redis server (not shared with other test files). */
  redis: Redis;
  system: TestSystem;
}

/** Our own probes show up in the counters: they are left out, by query text and command name. */
const probeStatement = /pg_stat_statements/i;
const probeCommands = new Set(['info', 'config|resetstat', 'config']);

/** Zeroes every counter the probe reads. */
export async function resetCounters(probe: CostProbe): Promise<void> {
  await probe.pg`select pg_stat_statements_reset()`;
  await probe.redis.config('RESETSTAT');
  probe.system.sim.state.telegram.calls.clear();
  probe.system.sim.state.model.requests.clear();
}

/** Reads the counters as they stand now. */
export async function readCounters(probe: CostProbe): Promise<CostCounts> {
  const rows = await probe.pg<{ query: string; calls: number }[]>`
    select s.query, sum(s.calls)::int as calls from pg_stat_statements s
    join pg_database d on d.oid = s.dbid where d.datname = current_database() group by s.query`;
  const statements: Record<string, number> = {};
  for (const row of rows) if (!probeStatement.test(row.query)) statements[normaliseQuery(row.query)] = (statements[normaliseQuery(row.query)] ?? 0) + row.calls;
  return {
    statements,
    redis: parseCommandStats(await probe.redis.info('commandstats')),
    platform: Object.fromEntries(probe.system.sim.state.telegram.calls),
    modelRequests: probe.system.sim.state.model.requests.matching('any').length,
  };
}

/**
 * Runs `action` between two quiet points and returns what it cost. The work
 * a turn leaves behind (delivery, the queue job settling, the lease released,
 * the worker's next wait) ends at no event a test can await, so quiet is
 * three reads 150 ms apart that agree, within a deadline: first before the
 * counters are zeroed (the tail of earlier work is not counted), then after
 * the action.
 */
export async function measure(probe: CostProbe, action: () => Promise<void>, timeoutMs = 15_000): Promise<CostCounts> {
  await waitForQuiet(probe, timeoutMs);
  await resetCounters(probe);
  await action();
  return waitForQuiet(probe, timeoutMs);
}

async function waitForQuiet(probe: CostProbe, timeoutMs: number): Promise<CostCounts> {
  const deadline = Date.now() + timeoutMs;
  let last = JSON.stringify(await readCounters(probe));
  let same = 0;
  while (same < 2) {
    if (Date.now() > deadline) throw new Error(`the counters were still moving after ${timeoutMs} ms: ${last}`);
    await sleep(150);
    const now = JSON.stringify(await readCounters(probe));
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return JSON.parse(last) as CostCounts;
}

export function totalOf(counts: Record<string, number>): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

function parseCommandStats(info: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match && !probeCommands.has(match[1] as string)) counts[match[1] as string] = Number(match[2]);
  }
  return counts;
}

/** One line per statement shape: whitespace collapsed, cut to a readable length. */
function normaliseQuery(query: string): string {
  const flat = query.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 157)}...` : flat;
}
