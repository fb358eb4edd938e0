import { cpus, loadavg, totalmem } from 'node:os';
import type { LatencySummary } from '../latency-histogram.ts';
import type { LoadTestReport } from '../report.ts';
import type { CompressionCost, CompressionSample } from './compression-cost.ts';
import type { CostPoint } from './cost-growth.ts';
import type { ProfileSummary } from './cpu-profile.ts';
import { trendMiBPerMinute, type CpuUsage, type RssSeries } from './process-stats.ts';
import type { ThroughputPoint } from './throughput-scenarios.ts';

export interface BenchFigures {
  command: string;
  startedAt: Date;
  finishedAt: Date;
  /** Load average when the bench started: other work on the machine skews every figure. */
  loadAtStart: number[];
  throughput: { name: string; points: ThroughputPoint[]; best: ThroughputPoint | undefined }[];
  relayBest: ThroughputPoint | undefined;
  halfRate?: { rate: number; report: LoadTestReport; cpu: CpuUsage; redisCommandsPerTurn?: number };
  memory: { atStart: Record<string, number>; underLoadMax: Record<string, number>; long?: { durationS: number; rate: number; report: LoadTestReport; series: RssSeries[] } };
  profiles: { rate: number; summaries: Record<string, ProfileSummary | undefined> };
  cost?: { history: CostPoint[]; conversations: CostPoint[] };
  turns?: { overhead: LatencySummary; endToEnd: LatencySummary; interrupt: LatencySummary };
  compression?: CompressionCost;
}

/** Issue 4: the gateway's own work in compressing a 200k-token session, judged on the median of the warm samples. */
const compressionTargetMs = 100;

const f = (n: number, digits = 2) => n.toFixed(digits);
const pct = (n: number) => `${(n * 100).toFixed(0)} %`;
const verdict = (ok: boolean) => (ok ? 'reached' : '**not reached**');

function latencyRow(name: string, s: LatencySummary, target: string): string {
  return `| ${name} | ${s.count} | ${f(s.p50)} | ${f(s.p95)} | ${f(s.p99)} | ${f(s.max)} | ${target} |`;
}

function cpuPerTurn(point: { cpu: CpuUsage; report: LoadTestReport }): string {
  const turns = Math.max(1, point.report.turns.answered);
  return Object.entries(point.cpu.byGroup)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${f(ms / turns)}`)
    .join(', ');
}

/** The share of the machine's CPU that went to processes outside the system under test (other work, the kernel). */
function othersShare(usage: CpuUsage): string {
  return pct(usage.otherMs / Math.max(1, usage.wallMs * cpus().length));
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Spread of a cost series: (max p50 − min p50) / min p50. */
function spread(points: CostPoint[]): number {
  const p50s = points.map((p) => p.overhead.p50);
  const min = Math.min(...p50s);
  return min > 0 ? (Math.max(...p50s) - min) / min : 0;
}

/** CPU ms per turn of the groups whose name matches. */
function cpuMsPerTurn(point: { cpu: CpuUsage; report: LoadTestReport }, pattern: RegExp): number {
  const turns = Math.max(1, point.report.turns.answered);
  return Object.entries(point.cpu.byGroup)
    .filter(([name]) => pattern.test(name))
    .reduce((sum, [, ms]) => sum + ms / turns, 0);
}

/** The issue's targets, each with the measured figure and, where missed, what the measurements say limits it. */
function renderTargets(b: BenchFigures): string[] {
  const one = b.throughput[0]?.best;
  const relay = b.relayBest;
  const half = b.halfRate;
  const rows: string[] = [];
  const row = (target: string, measured: string, ok: boolean | undefined, limit: string) =>
    rows.push(`| ${target} | ${measured} | ${ok === undefined ? 'not measured' : ok ? 'yes' : '**no**'} | ${ok ? '' : limit} |`);
  if (one) {
    const ours = cpuMsPerTurn(one, /gateway|worker|postgres|redis/);
    const worker = cpuMsPerTurn(one, /worker/);
    const postgres = cpuMsPerTurn(one, /postgres/);
    row(
      '≥ 1,000 turns/s end to end, instant model',
      `${f(one.sustained, 0)} turns/s (1 worker); ${f(b.throughput[1]?.best?.sustained ?? 0, 0)} (2 workers)`,
      one.sustained >= 1000,
      `CPU: Switchboard's processes spend ${f(ours, 1)} ms of CPU per turn (worker ${f(worker, 1)}, Postgres ${f(postgres, 1)}), so 2 cores cap it near ${f(2000 / Math.max(0.001, ours), 0)} turns/s even with the simulator and load generator elsewhere; ${f(one.redisCommandsPerTurn ?? 0, 0)} Redis commands per turn. A second worker adds no CPU to a saturated 2-core box. Profile below.`,
    );
    if (relay) {
      row(
        '≥ 50 % of the minimal relay',
        `${pct(one.sustained / relay.sustained)} (${f(one.sustained, 0)} vs ${f(relay.sustained, 0)} turns/s)`,
        one.sustained / relay.sustained >= 0.5,
        `The relay costs ${f(cpuMsPerTurn(relay, /relay/), 1)} ms of CPU per turn in its process; Switchboard ${f(ours, 1)} ms (durable store before the ack, queue, lease, transcript commit, outbox) — the simulator and load generator cost about the same in both.`,
      );
    }
  }
  if (half?.report.overheadMs) {
    row(
      'gateway overhead p99 ≤ 20 ms at half the maximum rate',
      `p99 ${f(half.report.overheadMs.p99, 1)} ms (p50 ${f(half.report.overheadMs.p50, 1)}) at ${f(half.rate, 0)} turns/s`,
      half.report.overheadMs.p99 <= 20,
      `Queueing for CPU: at half the maximum the machine was ${pct(half.cpu.machineBusy)} busy (${othersShare(half.cpu)} other work), so turns wait for the worker's event loop; one turn alone takes ${f(b.turns?.overhead.p50 ?? 0, 1)} ms (p50, sequential table below).`,
    );
    row(
      'ingress ack p99 ≤ 5 ms',
      `p50 ${f(half.report.ackMs.p50, 1)} ms, p99 ${f(half.report.ackMs.p99, 1)} ms`,
      half.report.ackMs.p99 <= 5,
      `The ack waits for one Postgres round trip (store) and the BullMQ enqueue (Redis) by design; its tail is CPU contention: the gateway shares 2 cores with the worker, Postgres, the simulator and the load generator.`,
    );
  }
  if (b.cost) {
    const history = b.cost.history;
    const conversations = b.cost.conversations;
    row(
      'per-turn overhead flat (±10 %) across 10 / 1,000 / 10,000 messages of history',
      history.map((p) => f(p.overhead.p50, 0)).join(' / ') + ' ms p50',
      spread(history) <= 0.1,
      'Each turn reads the whole session (`loadSessionMessages`: every message row, ordered by seq) and sends all of it to the model, so its cost grows with the history: that is model context, which compression (not measured here) is meant to bound.',
    );
    row(
      'per-turn overhead flat (±10 %) with 1,000 vs 1,000,000 conversations',
      conversations.map((p) => f(p.overhead.p50, 0)).join(' vs ') + ' ms p50',
      spread(conversations) <= 0.1,
      'Within run-to-run noise of a shared machine at these sample sizes; look at p95 as well.',
    );
  }
  const compression = b.compression;
  if (compression && compression.samples.length > 0) {
    const gateway = compression.samples.map((c) => c.gatewayMs);
    const first = compression.samples[0] as CompressionSample;
    row(
      `compression of a ${f(compression.targetTokens / 1000, 0)}k-token session: gateway's own work < ${compressionTargetMs} ms`,
      `p50 ${f(median(gateway), 1)} ms, max ${f(Math.max(...gateway), 1)} ms (${gateway.length} compressions of ${first.messages.toLocaleString('en-US')} messages); the summariser call p50 ${f(median(compression.samples.map((c) => c.summariserMs)), 1)} ms with an instant model`,
      median(gateway) < compressionTargetMs,
      `The two steps that grow with the session: reading its ${first.messages.toLocaleString('en-US')} rows (one query; the transcript for the summariser needs every summarised message) and the commit that copies the ${first.keptMessages.toLocaleString('en-US')} kept rows into the child (one statement, a foreign-key check per row); see "Compression" below and docs/compression.md. Both are CPU-bound and share 2 cores with Postgres, the simulator and other work.`,
    );
  }
  const long = b.memory.long;
  if (long) {
    const changes = long.series.map((series) => {
      const quarter = Math.max(1, Math.floor(series.samples.length / 4));
      const first = median(series.samples.slice(0, quarter).map(([, v]) => v));
      const last = median(series.samples.slice(-quarter).map(([, v]) => v));
      return { name: series.name, change: (last - first) / Math.max(1, first) };
    });
    row(
      'RSS flat over the long run',
      changes.map((c) => `${c.name} ${c.change >= 0 ? '+' : ''}${pct(c.change)}`).join(', ') + ` over ${long.durationS} s`,
      // Shrinking is not a leak; only growth past a few per cent counts against the target.
      changes.every((c) => c.change <= 0.05),
      'See the memory table: a rise that keeps its slope to the end is growth, a step that levels off is warm-up (pools, JIT, caches).',
    );
  }
  if (rows.length === 0) return [];
  return ['## Targets (issue 8; compression: issue 4)', '', '| target | measured | reached | what limits it (measured) |', '| --- | --- | --- | --- |', ...rows, ''];
}

export function renderBenchReport(b: BenchFigures): string {
  const cpu = cpus();
  const lines: string[] = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (`apps/loadtest/src/bench/run-bench.ts`), which replaces the previous figures.',
    'Everything runs on one machine: Postgres and Redis from `scripts/services.sh`, the simulator, gateways,',
    'workers and the load generator as separate Node processes. Load is Topical-Chat replayed by the load tester',
    '(`docs/loadtest.md`): every reply is checked, and a run whose replies do not check out does not count.',
    '',
    `- date: ${b.startedAt.toISOString()} (took ${f((b.finishedAt.getTime() - b.startedAt.getTime()) / 60_000, 1)} min)`,
    `- command: \`${b.command}\``,
    `- machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${f(totalmem() / 2 ** 30, 1)} GiB; load average at start ${b.loadAtStart.map((n) => f(n)).join(' / ')}, at end ${loadavg().map((n) => f(n)).join(' / ')}`,
    `- node: ${process.version}, ${process.platform} ${process.arch}`,
    '',
    ...renderTargets(b),
    '## Throughput (instant model, closed loop: each conversation sends its next line when the reply arrives)',
    '',
    '| system | concurrency | sustained turns/s | e2e p50 | e2e p99 | ack p99 | replies ok | machine busy (of it, others\' work) | CPU ms per turn | Redis commands per turn |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const series of b.throughput) {
    for (const p of series.points) {
      const r = p.report;
      lines.push(
        `| ${series.name}${p === series.best ? ' **(max)**' : ''} | ${p.concurrency} | ${f(p.sustained, 0)} | ${f(r.endToEndMs.p50)} | ${f(r.endToEndMs.p99)} | ${f(r.ackMs.p99)} | ${r.ok ? 'yes' : `no (lost ${r.replies.lost}, dup ${r.replies.duplicated}, order ${r.replies.outOfOrder}, errors ${r.errors.total})`} | ${pct(p.cpu.machineBusy)} (${othersShare(p.cpu)}) | ${cpuPerTurn(p)} | ${p.redisCommandsPerTurn === undefined ? '—' : f(p.redisCommandsPerTurn, 1)} |`,
      );
    }
  }
  const one = b.throughput[0]?.best;
  const relay = b.relayBest;
  lines.push('');
  if (one) {
    const turns = Math.max(1, one.report.turns.answered);
    const perTurn = Object.entries(one.cpu.byGroup).map(([name, ms]) => [name, ms / turns] as const);
    const total = perTurn.reduce((sum, [, ms]) => sum + ms, 0);
    const ours = perTurn.filter(([name]) => /gateway|worker|postgres|redis/.test(name)).reduce((sum, [, ms]) => sum + ms, 0);
    const cores = cpus().length;
    lines.push(
      `At the maximum every turn cost ${f(total, 1)} ms of CPU across all processes (Switchboard's own — gateway, worker, Postgres, Redis — ${f(ours, 1)} ms; the rest is the simulator and the load generator). ${cores} cores give ${cores * 1000} ms of CPU per second, so this mix cannot exceed ~${f((cores * 1000) / Math.max(0.001, total), 0)} turns/s on this machine, and Switchboard alone, with its platform and load generator elsewhere, ~${f((cores * 1000) / Math.max(0.001, ours), 0)} turns/s. ${
        one.cpu.machineBusy >= 0.9
          ? `The machine was ${pct(one.cpu.machineBusy)} busy: CPU per turn is the limit, not waiting.`
          : `The machine was only ${pct(one.cpu.machineBusy)} busy: waiting (latency per turn × concurrency), not CPU, bounds this figure.`
      }`,
      '',
    );
  }
  if (one && relay) {
    const ratio = one.sustained / relay.sustained;
    lines.push(
      `Switchboard (1 gateway + 1 worker) sustains **${f(one.sustained, 0)} turns/s**; the minimal relay (\`minimal-relay.ts\`: webhook → model → sendMessage, no queue, no database, acks before working) sustains **${f(relay.sustained, 0)} turns/s** against the same simulator: Switchboard runs at **${pct(ratio)}** of it (target ≥ 50 %: ${verdict(ratio >= 0.5)}). Target ≥ 1,000 turns/s: ${verdict(one.sustained >= 1000)}.`,
    );
  }
  if (b.halfRate) {
    const h = b.halfRate.report;
    lines.push(
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
    );
  }
  lines.push('', '## Memory (RSS, MiB, from /proc/<pid>/status)', '');
  const long = b.memory.long;
  const names = Object.keys(b.memory.atStart);
  lines.push(
    `| process | at start | max under the throughput runs |${long ? ' long run: median of the first quarter | median of the last quarter | change | slope over the run (MiB/min) |' : ''}`,
    `| --- | --- | --- |${long ? ' --- | --- | --- | --- |' : ''}`,
  );
  for (const name of names) {
    const samples = long?.series.find((s) => s.name === name)?.samples ?? [];
    const quarter = Math.max(1, Math.floor(samples.length / 4));
    const first = median(samples.slice(0, quarter).map(([, v]) => v));
    const last = median(samples.slice(-quarter).map(([, v]) => v));
    lines.push(
      `| ${name} | ${f(b.memory.atStart[name] ?? 0, 1)} | ${f(b.memory.underLoadMax[name] ?? 0, 1)} |${
        long ? ` ${f(first, 1)} | ${f(last, 1)} | ${last >= first ? '+' : ''}${f(last - first, 1)} (${pct((last - first) / Math.max(1, first))}) | ${f(trendMiBPerMinute(samples), 2)} |` : ''
      }`,
    );
  }
  if (long) {
    lines.push(
      '',
      `Long run: ${long.durationS} s at ${f(long.rate, 0)} turns/s offered (a third of the maximum, so the run stays below saturation), ${long.report.turns.answered.toLocaleString('en-US')} turns, replies ${long.report.ok ? 'all checked out' : `did NOT check out (lost ${long.report.replies.lost}, errors ${long.report.errors.total}; see \`.data/bench-reports/long-run/report.json\`)`}. 1,000,000 turns do not fit the bench's ~10 minutes on this machine. Medians of a quarter each, because a single sample lands anywhere on the garbage collector's sawtooth; RSS is flat when the change is within a few per cent.`,
    );
  }
  if (b.cost) {
    lines.push(
      '',
      '## Cost growth (per-turn overhead = end to end minus model time, sequential turns in one chat, instant model)',
      '',
      '| case | samples | p50 | p95 | p99 | max | end-to-end p50 |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...[...b.cost.history, ...b.cost.conversations].map((p) => `| ${p.label} | ${p.overhead.count} | ${f(p.overhead.p50)} | ${f(p.overhead.p95)} | ${f(p.overhead.p99)} | ${f(p.overhead.max)} | ${f(p.endToEnd.p50)} |`),
      '',
      `Spread of p50 across history lengths: ${pct(spread(b.cost.history))}; across conversation counts: ${pct(spread(b.cost.conversations))} (target: flat within 10 %: ${verdict(spread(b.cost.history) <= 0.1)} / ${verdict(spread(b.cost.conversations) <= 0.1)}).`,
      'History is seeded straight into `messages` (short rows, small token estimates, so compression stays out of it); conversations with one `INSERT … SELECT generate_series` and `ANALYZE`.',
    );
  }
  if (b.compression && b.compression.samples.length > 0) lines.push(...renderCompression(b.compression));
  if (b.turns) {
    lines.push(
      '',
      '## Turns, one at a time (milliseconds)',
      '',
      '| figure | samples | p50 | p95 | p99 | max | target |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      latencyRow('scheduling overhead per turn (end to end minus model time), instant model', b.turns.overhead, 'p50 < 5'),
      latencyRow('end to end per turn (webhook sent → reply at the platform), instant model', b.turns.endToEnd, '—'),
      latencyRow('interrupt latency (new message sent → model stream aborted)', b.turns.interrupt, 'p99 < 50'),
      '',
      'Overhead: one conversation, sequential turns; the model time the simulator recorded is subtracted from',
      'webhook-sent → reply-received. Interrupt latency: a second message is sent while the model streams a long',
      'answer; the figure runs from sending it to the simulator seeing the stream closed, so it includes the webhook',
      'hop and is an upper bound of "stored → aborted".',
    );
  }
  lines.push('', `## What limits it (CPU profile, \`node --cpu-prof\`, closed loop at ${f(b.profiles.rate, 0)} turns/s)`, '');
  for (const [name, summary] of Object.entries(b.profiles.summaries)) {
    if (!summary) {
      lines.push(`- ${name}: no profile was written`);
      continue;
    }
    lines.push(
      `**${name}** — ${f(summary.busyMs / 1000, 1)} s of CPU in ${f(summary.windowMs / 1000, 1)} s of load (${pct(summary.busyMs / Math.max(1, summary.windowMs))} of one core). By package: ${summary.byPackage.map((p) => `${p.frame} ${pct(p.selfShare)}`).join(', ')}.`,
      '',
      '| top frames by self time | share of busy time |',
      '| --- | --- |',
      ...summary.topFrames.map((frame) => `| \`${frame.frame.replaceAll('|', '\\|')}\` | ${f(frame.selfShare * 100, 1)} % |`),
      '',
    );
  }
  lines.push(
    'How to read this: the throughput table gives each process\'s CPU time per turn at the maximum. On a 2-core machine the',
    'sum over all processes (load generator and simulator included) is the budget; the process with the largest share and',
    'the frames above are where time goes. Figures move with other work on the machine (see the load average above).',
    '',
  );
  return lines.join('\n');
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
