import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '@switchboard/harness';
import { readRssMiB } from './process-stats.ts';
import { startSystemUnderTest, type SystemUnderTest } from './system-under-test.ts';
import { runMeasured } from './throughput-scenarios.ts';

export interface BuildMemoryRow {
  mode: 'sources (tsx)' | 'dist (npm run build)';
  gatewayIdleMiB: number;
  workerIdleMiB: number;
  gatewayPeakMiB: number;
  workerPeakMiB: number;
  turnsPerSecond: number;
}

/** Highest RSS of each process while `body` runs, sampled every 200 ms. */
async function samplePeaks(sut: SystemUnderTest, body: () => Promise<number>): Promise<{ gateway: number; worker: number; turnsPerSecond: number }> {
  const peaks = { gateway: 0, worker: 0 };
  const sample = () => {
    peaks.gateway = Math.max(peaks.gateway, readRssMiB(sut.gateways[0]?.child.pid ?? 0) ?? 0);
    peaks.worker = Math.max(peaks.worker, readRssMiB(sut.workers[0]?.child.pid ?? 0) ?? 0);
  };
  const timer = setInterval(sample, 200);
  try {
    const turnsPerSecond = await body();
    sample();
    return { ...peaks, turnsPerSecond };
  } finally {
    clearInterval(timer);
  }
}

async function measureOne(built: boolean, durationS: number, log: (line: string) => void): Promise<BuildMemoryRow> {
  const mode = built ? 'dist (npm run build)' : 'sources (tsx)';
  log(`bench: memory of one gateway and one worker, ${mode}`);
  const sut = await startSystemUnderTest(built ? 'memory-dist' : 'memory-tsx', { workers: 1, built });
  try {
    // Idle: after start-up work (JIT, pools) has settled, before any message.
    await sleep(3_000);
    const gatewayIdleMiB = readRssMiB(sut.gateways[0]?.child.pid ?? 0) ?? 0;
    const workerIdleMiB = readRssMiB(sut.workers[0]?.child.pid ?? 0) ?? 0;
    const target = { simUrl: sut.simUrl, inboundSimUrls: sut.inboundSimUrls, gatewayUrls: sut.gatewayUrls, explicitUpdateIds: true };
    const peaks = await samplePeaks(sut, async () => {
      const run = await runMeasured({ target, processes: sut.processes }, `memory-${built ? 'dist' : 'tsx'}`, { concurrency: 32, durationS });
      return run.report.turnsPerSecond;
    });
    return { mode, gatewayIdleMiB, workerIdleMiB, gatewayPeakMiB: peaks.gateway, workerPeakMiB: peaks.worker, turnsPerSecond: peaks.turnsPerSecond };
  } finally {
    await sut.close();
  }
}

/**
 * Resident memory of the gateway and the worker run from the sources under
 * tsx (how development runs them) and from `dist/` (how production runs
 * them), idle and at the peak of a closed-loop load of 32 conversations.
 */
export async function measureBuildMemory(durationS: number, log: (line: string) => void): Promise<BuildMemoryRow[]> {
  execFileSync(process.execPath, [join(repoRoot, 'scripts/build.mjs')], { cwd: repoRoot, stdio: 'ignore' });
  return [await measureOne(false, durationS, log), await measureOne(true, durationS, log)];
}

export function formatBuildMemory(rows: BuildMemoryRow[]): string {
  const mib = (value: number) => `${value.toFixed(0)} MiB`;
  return [
    '| run from | gateway idle | worker idle | gateway peak under load | worker peak under load | turns/s during the load |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.mode} | ${mib(r.gatewayIdleMiB)} | ${mib(r.workerIdleMiB)} | ${mib(r.gatewayPeakMiB)} | ${mib(r.workerPeakMiB)} | ${r.turnsPerSecond.toFixed(0)} |`),
  ].join('\n');
}
