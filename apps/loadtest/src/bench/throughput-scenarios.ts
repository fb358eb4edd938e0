import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, type ManagedProcess } from '@switchboard/harness';
import { readJson } from '../http-json.ts';
import { createLoadTestOptions, type LoadTarget, type LoadTestOptions } from '../options.ts';
import type { LoadTestReport } from '../report.ts';
import { runLoadTest } from '../run-load-test.ts';
import { findPids, readRedisCommandCount, startCpuMeasurement, type CpuUsage } from './process-stats.ts';

export interface ThroughputPoint {
  concurrency: number;
  /** Mean replies per second over the steady part of the run (first seconds and the drain left out). */
  sustained: number;
  report: LoadTestReport;
  cpu: CpuUsage;
  redisCommandsPerTurn?: number;
}

export interface MeasuredSystem {
  target: LoadTarget;
  /** Named processes whose CPU time is reported per turn. */
  processes: ManagedProcess[];
  databaseName?: string;
  /** Counted with INFO commandstats before and after (shared with whatever else uses this Redis). */
  redisUrl?: string;
}

/**
 * Replies per second over whole seconds, leaving out the warm-up (JIT,
 * connection pools, the first conversations all starting at once) and the
 * drain after sending stopped: the rate the system keeps up, not its average.
 */
export function sustainedRate(report: LoadTestReport, durationS: number): number {
  const warmup = durationS >= 10 ? 3 : 1;
  const steady = report.timeline.filter((point) => point.second >= warmup && point.second < durationS - 1);
  if (steady.length === 0) return report.turnsPerSecond;
  return steady.reduce((sum, point) => sum + point.turns, 0) / steady.length;
}

/** One load-test run against a system the bench started, with CPU accounting per process group. */
export async function runMeasured(
  system: MeasuredSystem,
  name: string,
  overrides: Partial<LoadTestOptions>,
): Promise<{ report: LoadTestReport; cpu: CpuUsage; redisCommandsPerTurn?: number }> {
  // A fresh record in the simulator each run: its stores only grow, and a big one slows every wait.
  await readJson(`${system.target.simUrl}/control/reset`, { method: 'POST' });
  const groups: Record<string, () => number[]> = { 'load generator': () => [process.pid] };
  for (const p of system.processes) if (p.child.pid) groups[p.name] = () => [p.child.pid as number];
  if (system.databaseName) {
    const database = system.databaseName;
    groups.postgres = () => findPids(` ${database} `);
    groups.redis = () => readRedisPid();
  }
  const redisBefore = system.redisUrl ? await readRedisCommandCount(system.redisUrl) : undefined;
  const measurement = startCpuMeasurement(groups);
  const report = await runLoadTest(
    createLoadTestOptions({
      target: system.target,
      settleMs: 300,
      measureOverhead: false,
      outDir: join(repoRoot, '.data', 'bench-reports', name),
      ...overrides,
    }),
  );
  const cpu = measurement.finish();
  if (redisBefore === undefined || !system.redisUrl) return { report, cpu };
  const redisCommands = (await readRedisCommandCount(system.redisUrl)) - redisBefore;
  return { report, cpu, redisCommandsPerTurn: redisCommands / Math.max(1, report.turns.answered) };
}

/**
 * Closed-loop load at rising concurrency with an instant model: each level
 * runs `durationS`; the best sustained rate whose replies all checked out is
 * the maximum. Stops early once two levels in a row gain less than 5 % over the best before them.
 */
export async function findMaxThroughput(
  system: MeasuredSystem,
  name: string,
  options: { levels: number[]; durationS: number; log: (line: string) => void },
): Promise<{ points: ThroughputPoint[]; best: ThroughputPoint | undefined }> {
  const points: ThroughputPoint[] = [];
  for (const concurrency of options.levels) {
    const { report, cpu, redisCommandsPerTurn } = await runMeasured(system, `${name}-c${concurrency}`, { concurrency, durationS: options.durationS });
    const point: ThroughputPoint = { concurrency, sustained: sustainedRate(report, options.durationS), report, cpu, ...(redisCommandsPerTurn !== undefined ? { redisCommandsPerTurn } : {}) };
    points.push(point);
    options.log(
      `bench: ${name} concurrency ${concurrency}: ${point.sustained.toFixed(0)} turns/s sustained, e2e p99 ${report.endToEndMs.p99.toFixed(1)} ms, machine ${(cpu.machineBusy * 100).toFixed(0)} % busy${report.ok ? '' : ' — CHECK FAILED'}`,
    );
    // Two levels in a row without a 5 % gain over the best: saturated (one alone can be noise).
    const bestBefore = (n: number) => Math.max(0, ...points.slice(0, -n).map((p) => p.sustained));
    const stalled = (n: number) => (points.at(-n)?.sustained ?? Number.POSITIVE_INFINITY) < bestBefore(n) * 1.05;
    if (points.length >= 3 && stalled(1) && stalled(2)) break;
  }
  const valid = points.filter((p) => p.report.ok);
  const best = valid.reduce<ThroughputPoint | undefined>((top, p) => (!top || p.sustained > top.sustained ? p : top), undefined);
  return { points, best };
}

function readRedisPid(): number[] {
  try {
    return [Number(readFileSync(join(repoRoot, '.data', 'redis', 'redis.pid'), 'utf8').trim())];
  } catch {
    return [];
  }
}
