import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import postgres from 'postgres';
import { migrateDatabase } from '@switchboard/db';
import { startPostgres, type PostgresServer } from '@switchboard/harness';
import { expect } from 'vitest';
import type { CostBudget, ScenarioBudget } from '../budgets/turn-cost-budget.ts';
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
  /** A client of the system's own Redis server (not shared with other test files); on a cluster, one per master. */
  redis: Redis | Redis[];
  system: TestSystem;
}

/**
 * Our own probes show up in the counters: they are left out, by query text
 * and command name. So is a cluster's own upkeep, which is no turn's cost:
 * a cluster client's `CLUSTER SLOTS` every few seconds and each replica's
 * `REPLCONF ACK` to its master every second, whatever the load.
 */
const probeStatement = /pg_stat_statements/i;
const probeCommands = new Set(['info', 'config|resetstat', 'config']);
const isUpkeep = (command: string) => probeCommands.has(command) || command.startsWith('cluster|') || command === 'replconf';
const serversOf = (probe: CostProbe): Redis[] => (Array.isArray(probe.redis) ? probe.redis : [probe.redis]);

/** Zeroes every counter the probe reads. */
export async function resetCounters(probe: CostProbe): Promise<void> {
  await probe.pg`select pg_stat_statements_reset()`;
  await Promise.all(serversOf(probe).map((server) => server.config('RESETSTAT')));
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
    redis: sumCounts(await Promise.all(serversOf(probe).map(async (server) => parseCommandStats(await server.info('commandstats'))))),
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
    if (match && !isUpkeep(match[1] as string)) counts[match[1] as string] = Number(match[2]);
  }
  return counts;
}

function sumCounts(all: Record<string, number>[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const counts of all) for (const [name, n] of Object.entries(counts)) sum[name] = (sum[name] ?? 0) + n;
  return sum;
}

/** One line per statement shape: whitespace collapsed, cut to a readable length. */
function normaliseQuery(query: string): string {
  const flat = query.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 157)}...` : flat;
}

/** The measured counts must be exactly one of the scenario's variants; the message shows every count and where it came from. */
export function expectWithinBudget(name: string, budget: ScenarioBudget, counts: CostCounts): void {
  const measured: CostBudget = {
    statements: totalOf(counts.statements),
    redisCommands: totalOf(counts.redis),
    platformCalls: counts.platform,
    modelRequests: counts.modelRequests,
  };
  const matches = budget.variants.some((variant) => JSON.stringify(sorted(variant)) === JSON.stringify(sorted(measured)));
  const detail = JSON.stringify({ measured, statements: counts.statements, redis: counts.redis }, null, 1);
  expect(matches, `${name} costs ${JSON.stringify(measured)}, not one of its budget's variants ${JSON.stringify(budget.variants)}.\n` +
    `If the change is meant, update test/budgets/turn-cost-budget.ts in the same commit and say why there.\n${detail}`).toBe(true);
}

function sorted(budget: CostBudget): CostBudget {
  const platformCalls = Object.fromEntries(Object.entries(budget.platformCalls).sort(([a], [b]) => a.localeCompare(b)));
  return { statements: budget.statements, redisCommands: budget.redisCommands, platformCalls, modelRequests: budget.modelRequests };
}

/** A Postgres of the file's own that counts statements (pg_stat_statements, top level), a migrated database on it, and a connection to read the counters. */
export async function startCountingPostgres(): Promise<{ server: PostgresServer; databaseUrl: string; pg: postgres.Sql }> {
  const server = await startPostgres({ settings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=top'] });
  const admin = postgres(server.adminUrl, { max: 1, onnotice: () => undefined });
  await admin`create database budget`;
  await admin.end();
  const databaseUrl = server.urlFor('budget');
  await migrateDatabase(databaseUrl);
  const pg = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  await pg`create extension pg_stat_statements`;
  return { server, databaseUrl, pg };
}
