import { cpus, loadavg, totalmem } from 'node:os';
import type { BenchFigures } from './bench-figures.ts';
import { formatBuildMemory } from './build-memory.ts';
import type { CompressionCost, CompressionSample } from './compression-cost.ts';
import { trendMiBPerMinute } from './process-stats.ts';
import type { ThroughputPoint } from './throughput-scenarios.ts';
import { renderBeforeAfter } from './before-after.ts';
import { renderScheduleBurst } from './schedule-burst.ts';
import { compressionTargetMs, renderTargets } from './bench-targets.ts';
import { cpuPerTurn, f, latencyRow, median, othersShare, pct, spread, verdict } from './bench-format.ts';

/** docs/benchmarks.md: one section after another, each empty when the run did not measure it. */
export function renderBenchReport(b: BenchFigures): string {
  return [
    ...renderHeader(b),
    ...renderTargets(b),
    ...renderBeforeAfter(b),
    ...renderThroughput(b),
    ...renderHalfRate(b),
    ...renderBuildMemory(b),
    ...renderMemory(b),
    ...renderCostGrowth(b),
    ...(b.compression && b.compression.samples.length > 0 ? renderCompression(b.compression) : []),
    ...(b.scheduleBurst ? renderScheduleBurst(b.scheduleBurst) : []),
    ...renderSequentialTurns(b),
    ...renderProfiles(b),
  ].join('\n');
}

function renderHeader(b: BenchFigures): string[] {
  const cpu = cpus();
  return [
    '# Benchmarks',
    '',
    'Written by `npm run bench -- --write` (`apps/loadtest/src/bench/run-bench.ts`), which replaces the previous figures (without `--write` the bench only prints them).',
    'Everything runs on one machine: Postgres and Redis from `scripts/services.sh`, the simulator, gateways,',
    'workers and the load generator as separate Node processes. Load is Topical-Chat replayed by the load tester',
    '(`docs/loadtest.md`): every reply is checked, and a run whose replies do not check out does not count.',
    'Counts per turn (SQL statements, Redis commands, platform calls) are not measured here but held exactly by',
    '`npm test` (`test/e2e/turn-cost.e2e.test.ts` against `test/budgets/turn-cost-budget.ts`).',
    '',
    `- date: ${b.startedAt.toISOString()} (took ${f((b.finishedAt.getTime() - b.startedAt.getTime()) / 60_000, 1)} min)`,
    `- command: \`${b.command}\``,
    `- machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${f(totalmem() / 2 ** 30, 1)} GiB; load average at start ${b.loadAtStart.map((n) => f(n)).join(' / ')}, at end ${loadavg().map((n) => f(n)).join(' / ')}`,
    `- node: ${process.version}, ${process.platform} ${process.arch}`,
    '',
  ];
}

function renderThroughput(b: BenchFigures): string[] {
  const one = b.throughput[0]?.best;
  const relay = b.relayBest;
  return [
    '## Throughput (instant model, closed loop: each conversation sends its next line when the reply arrives)',
    '',
    '| system | concurrency | sustained turns/s | e2e p50 | e2e p99 | ack p99 | replies ok | machine busy (of it, others\' work) | CPU ms per turn | Redis commands per turn |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...b.throughput.flatMap((series) => series.points.map((p) => throughputRow(series.name, p, p === series.best))),
    '',
    ...(one ? [describeCpuBudget(one), ''] : []),
    ...(one && relay ? [compareWithRelay(one, relay)] : []),
  ];
}

function throughputRow(name: string, p: ThroughputPoint, best: boolean): string {
  const r = p.report;
  return `| ${name}${best ? ' **(max)**' : ''} | ${p.concurrency} | ${f(p.sustained, 0)} | ${f(r.endToEndMs.p50)} | ${f(r.endToEndMs.p99)} | ${f(r.ackMs.p99)} | ${r.ok ? 'yes' : `no (lost ${r.replies.lost}, dup ${r.replies.duplicated}, order ${r.replies.outOfOrder}, errors ${r.errors.total})`} | ${pct(p.cpu.machineBusy)} (${othersShare(p.cpu)}) | ${cpuPerTurn(p)} | ${p.redisCommandsPerTurn === undefined ? '—' : f(p.redisCommandsPerTurn, 1)} |`;
}

/** What the CPU per turn at the maximum allows on this machine, and whether CPU or waiting bounded the run. */
function describeCpuBudget(one: ThroughputPoint): string {
  const turns = Math.max(1, one.report.turns.answered);
  const perTurn = Object.entries(one.cpu.byGroup).map(([name, ms]) => [name, ms / turns] as const);
  const total = perTurn.reduce((sum, [, ms]) => sum + ms, 0);
  const ours = perTurn.filter(([name]) => /gateway|worker|postgres|redis/.test(name)).reduce((sum, [, ms]) => sum + ms, 0);
  const cores = cpus().length;
  return `At the maximum every turn cost ${f(total, 1)} ms of CPU across all processes (Switchboard's own — gateway, worker, Postgres, Redis — ${f(ours, 1)} ms; the rest is the simulator and the load generator). ${cores} cores give ${cores * 1000} ms of CPU per second, so this mix cannot exceed ~${f((cores * 1000) / Math.max(0.001, total), 0)} turns/s on this machine, and Switchboard alone, with its platform and load generator elsewhere, ~${f((cores * 1000) / Math.max(0.001, ours), 0)} turns/s. ${
    one.cpu.machineBusy >= 0.9
      ? `The machine was ${pct(one.cpu.machineBusy)} busy: CPU per turn is the limit, not waiting.`
      : `The machine was only ${pct(one.cpu.machineBusy)} busy: waiting (latency per turn × concurrency), not CPU, bounds this figure.`
  }`;
}

function compareWithRelay(one: ThroughputPoint, relay: ThroughputPoint): string {
  const ratio = one.sustained / relay.sustained;
  return `Switchboard (1 gateway + 1 worker) sustains **${f(one.sustained, 0)} turns/s**; the minimal relay (\`minimal-relay.ts\`: webhook → model → sendMessage, no queue, no database, acks before working) sustains **${f(relay.sustained, 0)} turns/s** against the same simulator: Switchboard runs at **${pct(ratio)}** of it (target ≥ 50 %: ${verdict(ratio >= 0.5)}). Target ≥ 1,000 turns/s: ${verdict(one.sustained >= 1000)}.`;
}

function renderHalfRate(b: BenchFigures): string[] {
  if (!b.halfRate) return [];
  const h = b.halfRate.report;
  return [
    '',
    `## Latency at half the maximum rate (${f(b.halfRate.rate, 0)} turns/s offered, ${f(h.turnsPerSecond, 0)} achieved, 1 gateway + 1 worker)`,
    '',
    '| figure (ms) | samples | p50 | p95 | p99 | max | target |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...(h.overheadMs ? [latencyRow('gateway overhead: end to end minus model time', h.overheadMs, `p99 ≤ 20: ${verdict(h.overheadMs.p99 <= 20)}`)] : []),
    latencyRow('end to end (webhook sent → reply recorded by the platform)', h.endToEndMs, '—'),
    latencyRow('ingress ack (gateway answer to the webhook, as the sim measured it)', h.ackMs, `p99 ≤ 5: ${verdict(h.ackMs.p99 <= 5)}`),
    '',
    `CPU ms per turn at this rate: ${cpuPerTurn(b.halfRate)}; machine ${pct(b.halfRate.cpu.machineBusy)} busy, ${othersShare(b.halfRate.cpu)} of it other work${b.halfRate.redisCommandsPerTurn === undefined ? '' : `; ${f(b.halfRate.redisCommandsPerTurn, 1)} Redis commands per turn (INFO commandstats, Lua-script commands included)`}.`,
  ];
}

function renderBuildMemory(b: BenchFigures): string[] {
  if (!b.buildMemory) return [];
  return [
    '',
    '## Production build (RSS, one gateway and one worker, idle after start-up and at the peak of 32 conversations in a closed loop)',
    '',
    formatBuildMemory(b.buildMemory),
    '',
    'Development runs the TypeScript sources through tsx; production runs `dist/` from `npm run build` with production dependencies only (`docs/deploy.md`).',
  ];
}

function renderMemory(b: BenchFigures): string[] {
  const long = b.memory.long;
  return [
    '',
    '## Memory (RSS, MiB, from /proc/<pid>/status)',
    '',
    `| process | at start | max under the throughput runs |${long ? ' long run: median of the first quarter | median of the last quarter | change | slope over the run (MiB/min) |' : ''}`,
    `| --- | --- | --- |${long ? ' --- | --- | --- | --- |' : ''}`,
    ...Object.keys(b.memory.atStart).map((name) => memoryRow(b, name)),
    ...(long
      ? [
          '',
          `Long run: ${long.durationS} s at ${f(long.rate, 0)} turns/s offered (a third of the maximum, so the run stays below saturation), ${long.report.turns.answered.toLocaleString('en-US')} turns, replies ${long.report.ok ? 'all checked out' : `did NOT check out (lost ${long.report.replies.lost}, errors ${long.report.errors.total}; see \`.data/bench-reports/long-run/report.json\`)`}. 1,000,000 turns do not fit the bench's ~10 minutes on this machine. Medians of a quarter each, because a single sample lands anywhere on the garbage collector's sawtooth; RSS is flat when the change is within a few per cent.`,
        ]
      : []),
  ];
}

function memoryRow(b: BenchFigures, name: string): string {
  const long = b.memory.long;
  const samples = long?.series.find((s) => s.name === name)?.samples ?? [];
  const quarter = Math.max(1, Math.floor(samples.length / 4));
  const first = median(samples.slice(0, quarter).map(([, v]) => v));
  const last = median(samples.slice(-quarter).map(([, v]) => v));
  return `| ${name} | ${f(b.memory.atStart[name] ?? 0, 1)} | ${f(b.memory.underLoadMax[name] ?? 0, 1)} |${
    long ? ` ${f(first, 1)} | ${f(last, 1)} | ${last >= first ? '+' : ''}${f(last - first, 1)} (${pct((last - first) / Math.max(1, first))}) | ${f(trendMiBPerMinute(samples), 2)} |` : ''
  }`;
}

function renderCostGrowth(b: BenchFigures): string[] {
  if (!b.cost) return [];
  return [
    '',
    '## Cost growth (per-turn overhead = end to end minus model time, sequential turns in one chat, instant model)',
    '',
    '| case | samples | p50 | p95 | p99 | max | end-to-end p50 |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...[...b.cost.history, ...b.cost.conversations].map((p) => `| ${p.label} | ${p.overhead.count} | ${f(p.overhead.p50)} | ${f(p.overhead.p95)} | ${f(p.overhead.p99)} | ${f(p.overhead.max)} | ${f(p.endToEnd.p50)} |`),
    '',
    `Spread of p50 across history lengths: ${pct(spread(b.cost.history))}; across conversation counts: ${pct(spread(b.cost.conversations))} (target: flat within 10 %: ${verdict(spread(b.cost.history) <= 0.1)} / ${verdict(spread(b.cost.conversations) <= 0.1)}).`,
    'History is seeded straight into `messages` (short rows, small token estimates, so compression stays out of it); conversations with one `INSERT … SELECT generate_series` and `ANALYZE`.',
  ];
}

function renderSequentialTurns(b: BenchFigures): string[] {
  if (!b.turns) return [];
  const phases = b.turns.phases;
  return [
    '',
    '## Turns, one at a time (milliseconds)',
    '',
    '| figure | samples | p50 | p95 | p99 | max | target |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...(phases
      ? [
          latencyRow('ingress: webhook posted → event stored (the gateway has the insert\'s commit)', phases.ingress, '—'),
          latencyRow('**scheduling: event stored → the model has the turn\'s request** (issue 3)', phases.schedule, 'p50 < 5'),
          latencyRow('the same from the insert\'s start (`received_at`: also the store\'s execution, fsync and answer)', phases.scheduleFromStatement, '—'),
          latencyRow('finish: model answer complete → reply at the platform (commit, sendMessage)', phases.finish, '—'),
        ]
      : []),
    latencyRow('overhead per turn end to end (webhook posted → reply at the platform, minus model time)', b.turns.overhead, '—'),
    ...(b.relaySequential ? [latencyRow('the same for the minimal relay (its three HTTP hops, nothing durable)', b.relaySequential, '—')] : []),
    latencyRow('end to end per turn (webhook posted → reply at the platform), instant model', b.turns.endToEnd, '—'),
    latencyRow('interrupt latency (new message sent → model stream aborted)', b.turns.interrupt, 'p99 < 50'),
    '',
    'Sequential turns, a fresh chat every 20 turns (so the model request, which carries the whole history, stays',
    'small; the cost-growth table above has longer histories), after 1,000 turns of warm-up: the processes are fresh, and their',
    'first few hundred turns run measurably slower (code not yet optimised by V8) than a gateway that has been up a while. The',
    'phases are cut where the gateway has the event stored (its `storedAt`, taken when the insert\'s commit has',
    'answered, the moment interrupt latency also starts from; the wake-up job carries it) and at the simulator\'s',
    'model-request and reply timestamps (microseconds, same machine, same wall clock). The row under scheduling cuts',
    'at the insert\'s `received_at` instead (Postgres\' clock, the statement\'s start), as this page did until',
    '2026-11-23: the difference is the store\'s own execution, commit and answer. Overhead end to end subtracts the model time the simulator recorded from',
    'webhook-posted → reply-received. Interrupt latency: a second message is sent while the model streams a long',
    'answer; the figure runs from sending it to the simulator seeing the stream closed, so it includes the webhook',
    'hop and is an upper bound of "stored → aborted".',
  ];
}

function renderProfiles(b: BenchFigures): string[] {
  return [
    '',
    `## What limits it (CPU profile, \`node --cpu-prof\`, closed loop at ${f(b.profiles.rate, 0)} turns/s)`,
    '',
    ...Object.entries(b.profiles.summaries).flatMap(([name, summary]) =>
      summary
        ? [
            `**${name}** — ${f(summary.busyMs / 1000, 1)} s of CPU in ${f(summary.windowMs / 1000, 1)} s of load (${pct(summary.busyMs / Math.max(1, summary.windowMs))} of one core). By package: ${summary.byPackage.map((p) => `${p.frame} ${pct(p.selfShare)}`).join(', ')}.`,
            '',
            '| top frames by self time | share of busy time |',
            '| --- | --- |',
            ...summary.topFrames.map((frame) => `| \`${frame.frame.replaceAll('|', '\\|')}\` | ${f(frame.selfShare * 100, 1)} % |`),
            '',
          ]
        : [`- ${name}: no profile was written`],
    ),
    'How to read this: the throughput table gives each process\'s CPU time per turn at the maximum. On a 2-core machine the',
    'sum over all processes (load generator and simulator included) is the budget; the process with the largest share and',
    'the frames above are where time goes. Figures move with other work on the machine (see the load average above).',
    '',
  ];
}

/** Issue 4's compression figure: per-compression deltas of the worker's histograms, and the sizes the database shows. */
function renderCompression(c: CompressionCost): string[] {
  const first = c.samples[0] as CompressionSample;
  const figure = (name: string, pick: (s: CompressionSample) => number, target: string) => {
    const values = c.samples.map(pick);
    return `| ${name} | ${values.length} | ${f(median(values))} | ${f(Math.max(...values))} | ${c.cold ? f(pick(c.cold)) : '—'} | ${target} |`;
  };
  const n = (value: number) => value.toLocaleString('en-US');
  return [
    '',
    `## Compression of a ${f(c.targetTokens / 1000, 0)}k-token session (\`/compact\` in a Telegram chat, instant model; milliseconds)`,
    '',
    '| figure | samples | p50 | max | first (cold) compression | target |',
    '| --- | --- | --- | --- | --- | --- |',
    figure("gateway's own work: `compressConversation` from start to return minus the summariser call", (s) => s.gatewayMs, `p50 < ${compressionTargetMs}: ${verdict(median(c.samples.map((s) => s.gatewayMs)) < compressionTargetMs)}`),
    figure('summariser call (request out, answer back; the simulated model answers at once)', (s) => s.summariserMs, '—'),
    figure('`/compact` end to end (webhook sent → reply at the platform)', (s) => s.endToEndMs, '—'),
    '',
    `Each compression: a fresh chat seeded straight into Postgres with ${n(first.messages)} Topical-Chat messages, ${n(first.tokens)} tokens as the worker counts them (o200k, \`estimateMessageTokens\`); ${n(first.summarisedMessages)} messages (${n(first.summarisedTokens)} tokens) summarised into a ${n(first.summaryTokens)}-token summary, ${n(first.keptMessages)} messages (${n(first.keptTokens)} tokens) kept verbatim (the worker's default keep budget).`,
    'Gateway and summariser figures are the deltas of the worker\'s `switchboard_compression_gateway_seconds` and `switchboard_compression_summariser_seconds` histograms around each `/compact`; the first compression of the worker is run first and shown apart (compiling the path, growing the heap).',
  ];
}
