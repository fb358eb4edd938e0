import type { BenchFigures } from './bench-figures.ts';
import type { CompressionSample } from './compression-cost.ts';
import type { CostPoint } from './cost-growth.ts';
import { cpuMsPerTurn, f, median, othersShare, pct, spread } from './bench-format.ts';

/** Issue 4: the gateway's own work in compressing a 200k-token session, judged on the median of the warm samples. */
export const compressionTargetMs = 100;

const mbToMiB = (mb: number) => (mb * 1e6) / 1_048_576;

/** One row of the targets table: the target, the measured figure, whether it was reached (undefined: not measured), and what limits it (shown only when missed). */
type TargetRow = [target: string, measured: string, ok: boolean | undefined, limit: string];

/** Issue 31's memory target, judged on the production build's row; the limits are in MB (10^6 bytes), RSS is read in MiB. */
function builtMemoryTargets(b: BenchFigures): TargetRow[] {
  const built = b.buildMemory?.find((r) => r.mode === 'dist (npm run build)');
  if (!built) return [];
  const mb = (mib: number) => f((mib * 1_048_576) / 1e6, 0);
  return [
    [
      'production build: every process ≤ 100 MB RSS idle, ≤ 150 MB at the peak (issue 31)',
      `idle gateway ${mb(built.gatewayIdleMiB)} MB, worker ${mb(built.workerIdleMiB)} MB; peak gateway ${mb(built.gatewayPeakMiB)} MB, worker ${mb(built.workerPeakMiB)} MB`,
      Math.max(built.gatewayIdleMiB, built.workerIdleMiB) <= mbToMiB(100) && Math.max(built.gatewayPeakMiB, built.workerPeakMiB) <= mbToMiB(150),
      'Measured in docs/benchmarks.md ("Memory from the production build"): about 45 MiB of each process is Node\'s own binary, mapped; 3 s after start V8 still holds its start-up garbage and a grown young generation, which it gives back about a minute later.',
    ],
  ];
}

/** The issue's targets, each with the measured figure and, where missed, what the measurements say limits it. */
export function renderTargets(b: BenchFigures): string[] {
  const rows = [...throughputTargets(b), ...halfRateTargets(b), ...costTargets(b), ...turnTargets(b), ...compressionTargets(b), ...builtMemoryTargets(b), ...longRunTargets(b)];
  if (rows.length === 0) return [];
  return [
    '## Targets (issue 8; compression: issue 4)',
    '',
    '| target | measured | reached | what limits it (measured) |',
    '| --- | --- | --- | --- |',
    ...rows.map(([target, measured, ok, limit]) => `| ${target} | ${measured} | ${ok === undefined ? 'not measured' : ok ? 'yes' : '**no**'} | ${ok ? '' : limit} |`),
    '',
  ];
}

function throughputTargets(b: BenchFigures): TargetRow[] {
  const one = b.throughput[0]?.best;
  const relay = b.relayBest;
  if (!one) return [];
  const ours = cpuMsPerTurn(one, /gateway|worker|postgres|redis/);
  const worker = cpuMsPerTurn(one, /worker/);
  const postgres = cpuMsPerTurn(one, /postgres/);
  const rows: TargetRow[] = [
    [
      '≥ 1,000 turns/s end to end, instant model',
      `${f(one.sustained, 0)} turns/s (1 worker); ${f(b.throughput[1]?.best?.sustained ?? 0, 0)} (2 workers)`,
      one.sustained >= 1000,
      `CPU: Switchboard's processes spend ${f(ours, 1)} ms of CPU per turn (worker ${f(worker, 1)}, Postgres ${f(postgres, 1)}), so 2 cores cap it near ${f(2000 / Math.max(0.001, ours), 0)} turns/s even with the simulator and load generator elsewhere; ${f(one.redisCommandsPerTurn ?? 0, 0)} Redis commands per turn. A second worker adds no CPU to a saturated 2-core box. Profile below.`,
    ],
  ];
  if (relay) {
    rows.push([
      '≥ 50 % of the minimal relay',
      `${pct(one.sustained / relay.sustained)} (${f(one.sustained, 0)} vs ${f(relay.sustained, 0)} turns/s)`,
      one.sustained / relay.sustained >= 0.5,
      `The relay costs ${f(cpuMsPerTurn(relay, /relay/), 1)} ms of CPU per turn in its process; Switchboard ${f(ours, 1)} ms (durable store before the ack, queue, lease, transcript commit, outbox) — the simulator and load generator cost about the same in both.`,
    ]);
  }
  return rows;
}

function halfRateTargets(b: BenchFigures): TargetRow[] {
  const half = b.halfRate;
  if (!half?.report.overheadMs) return [];
  return [
    [
      'gateway overhead p99 ≤ 20 ms at half the maximum rate',
      `p99 ${f(half.report.overheadMs.p99, 1)} ms (p50 ${f(half.report.overheadMs.p50, 1)}) at ${f(half.rate, 0)} turns/s`,
      half.report.overheadMs.p99 <= 20,
      `Queueing for CPU: at half the maximum the machine was ${pct(half.cpu.machineBusy)} busy (${othersShare(half.cpu)} other work), so turns wait for the worker's event loop; one turn alone takes ${f(b.turns?.overhead.p50 ?? 0, 1)} ms (p50, sequential table below).`,
    ],
    [
      'ingress ack p99 ≤ 5 ms',
      `p50 ${f(half.report.ackMs.p50, 1)} ms, p99 ${f(half.report.ackMs.p99, 1)} ms`,
      half.report.ackMs.p99 <= 5,
      `The ack waits for one Postgres round trip (store) and the BullMQ enqueue (Redis) by design; its tail is CPU contention: the gateway shares 2 cores with the worker, Postgres, the simulator and the load generator.`,
    ],
  ];
}

function costTargets(b: BenchFigures): TargetRow[] {
  if (!b.cost) return [];
  const history = b.cost.history;
  const conversations = b.cost.conversations;
  return [
    [
      'per-turn overhead flat (±10 %) across 10 / 1,000 / 10,000 messages of history',
      history.map((p) => f(p.overhead.p50, 0)).join(' / ') + ' ms p50',
      spread(history) <= 0.1,
      `The database side is flat: the preflight check (state read + decision) takes ${history.map((p) => f(p.preflight?.p50 ?? 0, 2)).join(' / ')} ms p50, and the worker's history cache reads only new rows. What still grows is the model request itself: every stored message goes to the model on every turn (built, serialised by the SDK and sent over HTTP, then parsed by the model) — that is model context, which compression bounds long before 10,000 real messages.`,
    ],
    ...preflightTargets(history),
    [
      'per-turn overhead flat (±10 %) with 1,000 vs 1,000,000 conversations',
      conversations.map((p) => f(p.overhead.p50, 0)).join(' vs ') + ' ms p50',
      spread(conversations) <= 0.1,
      'Within run-to-run noise of a shared machine at these sample sizes; look at p95 as well.',
    ],
  ];
}

/** Only when every history length has its preflight figure. */
function preflightTargets(history: CostPoint[]): TargetRow[] {
  const preflight = history.map((p) => p.preflight).filter((p) => p !== undefined);
  if (preflight.length !== history.length) return [];
  const p50s = preflight.map((p) => p.p50);
  const preflightSpread = (Math.max(...p50s) - Math.min(...p50s)) / Math.max(0.001, Math.min(...p50s));
  return [
    [
      '(issue 4) preflight check cost flat (±10 %) from 10 to 10,000 stored messages',
      `${p50s.map((v) => f(v, 3)).join(' / ')} ms p50 (${pct(preflightSpread)} spread)`,
      preflightSpread <= 0.1,
      'Sub-millisecond figures on a shared 2-core machine: the spread is scheduling noise (the check reads one session row and compares two numbers; nothing in it depends on the history).',
    ],
  ];
}

function turnTargets(b: BenchFigures): TargetRow[] {
  if (!b.turns) return [];
  const schedule = b.turns.phases?.schedule;
  return [
    [
      '(issue 3) scheduling overhead per turn p50 < 5 ms, instant model',
      schedule
        ? `p50 ${f(schedule.p50, 2)} ms, p99 ${f(schedule.p99, 1)} ms from the event stored (the gateway has the insert's commit) to the model holding the turn's request (sequential turns, chats of 20 turns; ${f(b.turns.phases?.scheduleFromStatement.p50 ?? Number.NaN, 2)} ms from the insert's start); end to end, platform to platform minus model time: p50 ${f(b.turns.overhead.p50, 1)} ms${b.relaySequential ? `, where the minimal relay's three HTTP hops alone take ${f(b.relaySequential.p50, 1)} ms` : ''}`
        : `p50 ${f(b.turns.overhead.p50, 1)} ms end to end (no phase split in this run)`,
      (schedule ?? b.turns.overhead).p50 < 5,
      'Scheduling is the hand-off to a worker (BullMQ add, pick-up), the conversation lease (Redis), one state read (Postgres) and the request to the model over HTTP; the rest of a turn is ingress (webhook, durable store) and finish (commit with fsync, `sendMessage`), split out in "Turns, one at a time". On this 2-core machine every process hop is a wake-up of another process; see docs/turns.md.',
    ],
    ['(issue 3) interrupt latency p99 < 50 ms', `p99 ${f(b.turns.interrupt.p99, 1)} ms (p50 ${f(b.turns.interrupt.p50, 1)})`, b.turns.interrupt.p99 < 50, ''],
  ];
}

function compressionTargets(b: BenchFigures): TargetRow[] {
  const compression = b.compression;
  if (!compression || compression.samples.length === 0) return [];
  const gateway = compression.samples.map((c) => c.gatewayMs);
  const first = compression.samples[0] as CompressionSample;
  return [
    [
      `compression of a ${f(compression.targetTokens / 1000, 0)}k-token session: gateway's own work < ${compressionTargetMs} ms`,
      `p50 ${f(median(gateway), 1)} ms, max ${f(Math.max(...gateway), 1)} ms (${gateway.length} compressions of ${first.messages.toLocaleString('en-US')} messages); the summariser call p50 ${f(median(compression.samples.map((c) => c.summariserMs)), 1)} ms with an instant model`,
      median(gateway) < compressionTargetMs,
      `The two steps that grow with the session: reading its ${first.messages.toLocaleString('en-US')} rows (one query; the transcript for the summariser needs every summarised message) and the commit that copies the ${first.keptMessages.toLocaleString('en-US')} kept rows into the child (one statement, a foreign-key check per row); see "Compression" below and docs/compression.md. Both are CPU-bound and share 2 cores with Postgres, the simulator and other work.`,
    ],
  ];
}

function longRunTargets(b: BenchFigures): TargetRow[] {
  const long = b.memory.long;
  if (!long) return [];
  const changes = long.series.map((series) => {
    const quarter = Math.max(1, Math.floor(series.samples.length / 4));
    const first = median(series.samples.slice(0, quarter).map(([, v]) => v));
    const last = median(series.samples.slice(-quarter).map(([, v]) => v));
    return { name: series.name, change: (last - first) / Math.max(1, first) };
  });
  return [
    [
      'RSS flat over the long run',
      changes.map((c) => `${c.name} ${c.change >= 0 ? '+' : ''}${pct(c.change)}`).join(', ') + ` over ${long.durationS} s`,
      // Shrinking is not a leak; only growth past a few per cent counts against the target.
      changes.every((c) => c.change <= 0.05),
      'See the memory table: a rise that keeps its slope to the end is growth, a step that levels off is warm-up (pools, JIT, caches).',
    ],
  ];
}
