/**
 * `npm run bench`: runs the benchmark scenarios against real processes and
 * rewrites docs/benchmarks.md with the machine, the command and every figure.
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../../../scripts/lib/processes.ts';
import type { LatencySummary } from './latency-histogram.ts';
import { startSystemUnderTest } from './system-under-test.ts';
import { measureInterruptLatency, measureTurnOverhead } from './turn-scenarios.ts';

const quick = process.argv.includes('--quick');

async function main(): Promise<void> {
  const startedAt = new Date();
  console.log('bench: starting gateway + 1 worker + simulator');
  const sut = await startSystemUnderTest('turns', { workers: 1 });
  let overhead, interrupt;
  try {
    console.log('bench: turn overhead (sequential turns, instant model)');
    overhead = await measureTurnOverhead(sut, quick ? 50 : 300);
    console.log('bench: interrupt latency (message during a streaming answer)');
    interrupt = await measureInterruptLatency(sut, quick ? 20 : 100);
  } finally {
    await sut.close();
  }
  const report = renderReport(startedAt, { overhead: overhead.overhead, endToEnd: overhead.endToEnd, interrupt });
  writeFileSync(join(repoRoot, 'docs', 'benchmarks.md'), report);
  console.log(report);
}

function row(name: string, s: LatencySummary, target: string): string {
  const f = (n: number) => n.toFixed(2);
  return `| ${name} | ${s.count} | ${f(s.p50)} | ${f(s.p95)} | ${f(s.p99)} | ${f(s.max)} | ${target} |`;
}

function renderReport(startedAt: Date, figures: { overhead: LatencySummary; endToEnd: LatencySummary; interrupt: LatencySummary }): string {
  const cpu = cpus();
  return [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (replaces the previous figures). Everything runs on one machine:',
    'Postgres and Redis from `scripts/services.sh`, the simulator, one gateway and one worker as separate Node processes.',
    '',
    `- date: ${startedAt.toISOString()}`,
    `- command: \`npm run bench${quick ? ' -- --quick' : ''}\``,
    `- machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- node: ${process.version}, ${process.platform} ${process.arch}`,
    '',
    '## Turns (milliseconds)',
    '',
    '| figure | samples | p50 | p95 | p99 | max | target |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    row('scheduling overhead per turn (end to end minus model time), instant model', figures.overhead, 'p50 < 5'),
    row('end to end per turn (webhook sent → reply at the platform), instant model', figures.endToEnd, '—'),
    row('interrupt latency (new message sent → model stream aborted)', figures.interrupt, 'p99 < 50'),
    '',
    'How they are measured: `apps/loadtest/src/bench/turn-scenarios.ts`. Overhead: one conversation,',
    'sequential turns, the scripted model answers at once; the model time the simulator recorded is',
    'subtracted from webhook-sent → reply-received. Interrupt latency: a second message is sent while the',
    'model streams a long answer; the figure runs from sending it to the simulator seeing the stream closed,',
    'so it includes the webhook hop and is an upper bound of "stored → aborted".',
    '',
  ].join('\n');
}

main().catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
