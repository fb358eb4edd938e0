import { cpus } from 'node:os';
import type { LatencySummary } from '../latency-histogram.ts';
import type { LoadTestReport } from '../report.ts';
import type { CostPoint } from './cost-growth.ts';
import type { CpuUsage } from './process-stats.ts';

/** Number formatting and small statistics shared by the bench report's sections. */
export const f = (n: number, digits = 2) => n.toFixed(digits);
export const pct = (n: number) => `${(n * 100).toFixed(0)} %`;
export const verdict = (ok: boolean) => (ok ? 'reached' : '**not reached**');

export function latencyRow(name: string, s: LatencySummary, target: string): string {
  return `| ${name} | ${s.count} | ${f(s.p50)} | ${f(s.p95)} | ${f(s.p99)} | ${f(s.max)} | ${target} |`;
}

export function cpuPerTurn(point: { cpu: CpuUsage; report: LoadTestReport }): string {
  const turns = Math.max(1, point.report.turns.answered);
  return Object.entries(point.cpu.byGroup)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${f(ms / turns)}`)
    .join(', ');
}

/** The share of the machine's CPU that went to processes outside the system under test (other work, the kernel). */
export function othersShare(usage: CpuUsage): string {
  return pct(usage.otherMs / Math.max(1, usage.wallMs * cpus().length));
}

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Spread of a cost series: (max p50 − min p50) / min p50. */
export function spread(points: CostPoint[]): number {
  const p50s = points.map((p) => p.overhead.p50);
  const min = Math.min(...p50s);
  return min > 0 ? (Math.max(...p50s) - min) / min : 0;
}

/** CPU ms per turn of the groups whose name matches. */
export function cpuMsPerTurn(point: { cpu: CpuUsage; report: LoadTestReport }, pattern: RegExp): number {
  const turns = Math.max(1, point.report.turns.answered);
  return Object.entries(point.cpu.byGroup)
    .filter(([name]) => pattern.test(name))
    .reduce((sum, [, ms]) => sum + ms / turns, 0);
}
