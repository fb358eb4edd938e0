/**
 * The benchmark run behind `npm run bench` (run-bench.ts parses the command
 * line): every scenario against real processes, then the markdown report,
 * printed and, with `write`, put in docs/benchmarks.md.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@switchboard/harness';
import type { BenchFigures } from './bench-figures.ts';
import { renderBenchReport } from './bench-report.ts';
import { measureBuildMemory } from './build-memory.ts';
import { measureCompressionCost } from './compression-cost.ts';
import { measureCostGrowth } from './cost-growth.ts';
import { monotonicNowUs, summarizeCpuProfile } from './cpu-profile.ts';
import { readRssMiB, startRssSampler } from './process-stats.ts';
import { startRelayUnderTest, startSystemUnderTest, type SystemUnderTest } from './system-under-test.ts';
import { findMaxThroughput, runMeasured, type MeasuredSystem } from './throughput-scenarios.ts';
import { measureScheduleBurst } from './schedule-burst.ts';
import { measureInterruptLatency, measureTurnOverhead } from './turn-scenarios.ts';

export interface BenchOptions {
  /** The short plan (about a minute) instead of the full one (about ten). */
  quick: boolean;
  /** Replace docs/benchmarks.md with the report. */
  write: boolean;
}

const plans = {
  quick: { levels: [8, 32], durationS: 5, halfRateS: 6, longS: 15, profileS: 8, profileWarmupS: 2, costTurns: 15, conversations: [1_000, 20_000], history: [10, 1_000, 10_000], overheadTurns: 50, overheadWarmup: 200, interrupts: 20, compressions: 2, reminders: 200 },
  full: { levels: [8, 32, 96, 192, 384], durationS: 15, halfRateS: 20, longS: 150, profileS: 20, profileWarmupS: 4, costTurns: 40, conversations: [1_000, 1_000_000], history: [10, 1_000, 10_000], overheadTurns: 300, overheadWarmup: 1000, interrupts: 100, compressions: 5, reminders: 2_000 },
};
const log = (line: string) => console.log(line);

function measured(sut: SystemUnderTest): MeasuredSystem {
  return {
    target: { simUrl: sut.simUrl, inboundSimUrls: sut.inboundSimUrls, gatewayUrls: sut.gatewayUrls, explicitUpdateIds: true },
    processes: sut.processes,
    databaseName: sut.databaseName,
    redisUrl: sut.redisUrl,
  };
}

function rssOf(sut: SystemUnderTest): Record<string, number> {
  return Object.fromEntries([...sut.gateways, ...sut.workers].map((p) => [p.name, readRssMiB(p.child.pid ?? 0) ?? 0]));
}

async function withSystem<T>(name: string, options: Parameters<typeof startSystemUnderTest>[1], body: (sut: SystemUnderTest) => Promise<T>): Promise<T> {
  log(`bench: starting ${name}: ${options.gateways ?? 1} gateway(s), ${options.workers} worker(s), simulator`);
  const sut = await startSystemUnderTest(name, options);
  try {
    return await body(sut);
  } finally {
    await sut.close();
  }
}

type Plan = typeof plans.full;
/** What the run has measured so far; each step adds its figures. */
type Figures = Partial<BenchFigures> & Pick<BenchFigures, 'throughput' | 'memory'>;

export async function runBench({ quick, write }: BenchOptions): Promise<void> {
  const plan: Plan = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const loadAtStart = loadavg();
  const figures: Figures = { throughput: [], memory: { atStart: {}, underLoadMax: {} } };

  await measureOneWorker(plan, figures);
  await withSystem('two-workers', { workers: 2 }, async (sut) => {
    const max = await findMaxThroughput(measured(sut), 'two-workers', { levels: plan.levels, durationS: plan.durationS, log });
    figures.throughput.push({ name: '1 gateway + 2 workers', ...max });
  });
  await measureRelay(plan, figures);
  figures.profiles = await profileUnderLoad(plan, figures.throughput[0]?.best?.concurrency ?? 16);
  await measureSequential(plan, figures);
  // Last, with its own systems: the production build's memory against the sources under tsx.
  figures.buildMemory = await measureBuildMemory(plan.durationS, log);

  const report = renderBenchReport({
    ...figures,
    command: `npm run bench -- ${quick ? '--quick ' : ''}--write`,
    startedAt,
    finishedAt: new Date(),
    loadAtStart,
    relayBest: figures.relayBest,
    profiles: figures.profiles,
  } as BenchFigures);
  console.log(report);
  if (write) {
    writeFileSync(join(repoRoot, 'docs', 'benchmarks.md'), report);
    log('bench: wrote docs/benchmarks.md');
  } else {
    log(`bench: docs/benchmarks.md left as it was; run npm run bench -- ${quick ? '--quick ' : ''}--write to replace it with these figures`);
  }
}

/** 1 gateway + 1 worker: maximum, half-rate latency and overhead, memory over the longest run that fits. */
async function measureOneWorker(plan: Plan, figures: Figures): Promise<void> {
  await withSystem('one-worker', { workers: 1 }, async (sut) => {
    figures.memory.atStart = rssOf(sut);
    const sampler = startRssSampler([...sut.gateways, ...sut.workers].map((p) => ({ name: p.name, pid: p.child.pid ?? 0 })), 1000);
    const max = await findMaxThroughput(measured(sut), 'one-worker', { levels: plan.levels, durationS: plan.durationS, log });
    for (const series of sampler.stop()) figures.memory.underLoadMax[series.name] = Math.max(...series.samples.map(([, v]) => v));
    figures.throughput.push({ name: '1 gateway + 1 worker', ...max });
    if (!max.best) throw new Error('no throughput level of 1 gateway + 1 worker checked out; see .data/bench-reports');
    const rate = max.best.sustained / 2;
    log(`bench: half rate (${rate.toFixed(0)} turns/s): latency, overhead, ack`);
    const half = await runMeasured(measured(sut), 'half-rate', { concurrency: max.best.concurrency, pacing: { kind: 'rate', turnsPerSecond: rate }, durationS: plan.halfRateS, measureOverhead: true });
    figures.halfRate = { rate, ...half };
    // A third of the maximum: at half, other work on a shared machine can tip the run into overload, and then
    // the figure is the backlog's growth, not the processes' memory.
    const longRate = max.best.sustained / 3;
    log(`bench: memory over ${plan.longS} s at ${longRate.toFixed(0)} turns/s`);
    const longSampler = startRssSampler([...sut.gateways, ...sut.workers].map((p) => ({ name: p.name, pid: p.child.pid ?? 0 })), 2000);
    const long = await runMeasured(measured(sut), 'long-run', { concurrency: max.best.concurrency, pacing: { kind: 'rate', turnsPerSecond: longRate }, durationS: plan.longS });
    figures.memory.long = { durationS: plan.longS, rate: longRate, report: long.report, series: longSampler.stop() };
  });
}

async function measureRelay(plan: Plan, figures: Figures): Promise<void> {
  log('bench: starting the minimal relay and its simulator');
  const relay = await startRelayUnderTest('minimal-relay');
  try {
    const max = await findMaxThroughput({ target: { simUrl: relay.simUrl }, processes: relay.processes }, 'minimal-relay', { levels: plan.levels, durationS: plan.durationS, log });
    figures.throughput.push({ name: 'minimal relay (baseline)', ...max });
    figures.relayBest = max.best;
    log('bench: the minimal relay, sequential turns (the floor of the platform and model hops)');
    figures.relaySequential = (await measureTurnOverhead({ simUrl: relay.simUrl }, plan.overheadTurns, { warmup: plan.overheadWarmup })).overhead;
  } finally {
    await relay.close();
  }
}

async function profileUnderLoad(plan: Plan, profileConcurrency: number): Promise<BenchFigures['profiles']> {
  const profileDir = join(repoRoot, '.data', 'bench-profiles');
  rmSync(profileDir, { recursive: true, force: true });
  let profileRate = 0;
  let window = { fromUs: 0, toUs: 0 };
  await withSystem('profiled', { workers: 1, profileDir }, async (sut) => {
    log(`bench: CPU profile of gateway and worker, concurrency ${profileConcurrency}, ${plan.profileS} s`);
    // Samples from the first seconds (JIT, pools filling) are left out, like the start-up before them.
    const fromUs = monotonicNowUs() + plan.profileWarmupS * 1_000_000;
    const run = await runMeasured(measured(sut), 'profiled', { concurrency: profileConcurrency, durationS: plan.profileS });
    window = { fromUs, toUs: monotonicNowUs() };
    profileRate = run.report.turnsPerSecond;
  });
  return {
    rate: profileRate,
    summaries: {
      'worker-0': summarizeCpuProfile(join(profileDir, 'worker-0'), window),
      'gateway-0': summarizeCpuProfile(join(profileDir, 'gateway-0'), window),
      'sim-0': summarizeCpuProfile(join(profileDir, 'sim-0'), window),
    },
  };
}

/** Sequential figures last, on a quiet system of their own: the 1,000,000 seeded conversations must not slow the throughput runs. */
async function measureSequential(plan: Plan, figures: Figures): Promise<void> {
  await withSystem('sequential', { workers: 1 }, async (sut) => {
    log('bench: turn overhead (sequential turns, instant model)');
    // A fresh chat every 20 turns: chats stay short, as most are, and the model request (which carries the whole
    // history) does not grow through the run; how cost grows with history is the cost-growth table's job.
    const overhead = await measureTurnOverhead(sut, plan.overheadTurns, { warmup: plan.overheadWarmup, turnsPerChat: 20 });
    log('bench: interrupt latency (message during a streaming answer)');
    const interrupt = await measureInterruptLatency(sut, plan.interrupts);
    figures.turns = { overhead: overhead.overhead, endToEnd: overhead.endToEnd, ...(overhead.phases ? { phases: overhead.phases } : {}), interrupt };
    figures.cost = await measureCostGrowth(sut, { turns: plan.costTurns, historySizes: plan.history, conversationCounts: plan.conversations, log });
    log(`bench: compression of a 200k-token session (/compact), ${plan.compressions} samples after a warm-up`);
    figures.compression = await measureCompressionCost(sut, { samples: plan.compressions, log });
    log(`bench: a reminder burst: ${plan.reminders} one-off schedules due at once`);
    figures.scheduleBurst = await measureScheduleBurst(sut, { count: plan.reminders, log });
  });
}
