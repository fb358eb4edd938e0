import type { BenchFigures } from './bench-figures.ts';
import { cpuMsPerTurn, f } from './bench-format.ts';

/**
 * Issue 8 asks for before/after figures of the speed work. "Before" is the
 * bench run of 2026-11-22 at commit b25b20d (docs/benchmarks.md of that
 * commit), kept here so every later run prints the comparison.
 */
const before = {
  commit: 'b25b20d',
  date: '2026-11-22',
  oneWorker: 129,
  twoWorkers: 123,
  relayShare: 0.21,
  switchboardCpuMs: 13.0,
  workerCpuMs: 6.3,
  postgresCpuMs: 5.1,
  redisCommands: 63,
  halfRateOverheadP50: 24.0,
  halfRateOverheadP99: 74.0,
  ackP50: 4.9,
  ackP99: 14.1,
  sequentialOverheadP50: 24.0,
  history: [24, 34, 83],
  interruptP99: 20.0,
};

export function renderBeforeAfter(b: BenchFigures): string[] {
  const one = b.throughput[0]?.best;
  const two = b.throughput[1]?.best;
  const relay = b.relayBest;
  const half = b.halfRate?.report;
  const now = (value: number | undefined, digits = 1) => (value === undefined ? '—' : f(value, digits));
  const rows: [string, string, string][] = [
    ['max turns/s, 1 gateway + 1 worker', f(before.oneWorker, 0), now(one?.sustained, 0)],
    ['max turns/s, 1 gateway + 2 workers', f(before.twoWorkers, 0), now(two?.sustained, 0)],
    ['share of the minimal relay', `${f(before.relayShare * 100, 0)} %`, one && relay ? `${f((one.sustained / relay.sustained) * 100, 0)} %` : '—'],
    ["Switchboard's CPU ms per turn at the maximum (worker, Postgres)", `${f(before.switchboardCpuMs, 1)} (${f(before.workerCpuMs, 1)}, ${f(before.postgresCpuMs, 1)})`, one ? `${f(cpuMsPerTurn(one, /gateway|worker|postgres|redis/), 1)} (${f(cpuMsPerTurn(one, /worker/), 1)}, ${f(cpuMsPerTurn(one, /postgres/), 1)})` : '—'],
    ['Redis commands per turn at the maximum', f(before.redisCommands, 0), now(one?.redisCommandsPerTurn, 0)],
    ['overhead at half the maximum rate, p50 / p99 ms', `${f(before.halfRateOverheadP50, 1)} / ${f(before.halfRateOverheadP99, 1)}`, half?.overheadMs ? `${f(half.overheadMs.p50, 1)} / ${f(half.overheadMs.p99, 1)}` : '—'],
    ['ingress ack at half the maximum rate, p50 / p99 ms', `${f(before.ackP50, 1)} / ${f(before.ackP99, 1)}`, half ? `${f(half.ackMs.p50, 1)} / ${f(half.ackMs.p99, 1)}` : '—'],
    ['overhead per turn, sequential, p50 ms', f(before.sequentialOverheadP50, 1), now(b.turns?.overhead.p50)],
    ['scheduling (stored → model has the request), sequential, p50 ms', 'not measured', now(b.turns?.phases?.schedule.p50, 2)],
    ['overhead p50 with 10 / 1,000 / 10,000 messages of history, ms', before.history.join(' / '), b.cost ? b.cost.history.map((p) => f(p.overhead.p50, 0)).join(' / ') : '—'],
    ['interrupt latency p99 ms', f(before.interruptP99, 1), now(b.turns?.interrupt.p99)],
  ];
  return [
    `## Before and after the speed work (issue 8; before: ${before.date}, commit ${before.commit})`,
    '',
    '| figure | before | this run |',
    '| --- | --- | --- |',
    ...rows.map(([name, was, is]) => `| ${name} | ${was} | ${is} |`),
    '',
    'What changed: one statement reads a conversation\'s whole state before a turn (it was five); the worker keeps transcripts in memory and reads only new rows (it read the whole session every turn); the commit returns the rows to deliver (no re-read); the hot statements are prepared postgres.js queries instead of drizzle queries planned anew each time; the commit hands the stored rows to the history cache (no read-back before the next turn) and an ordinary turn ends without a second state read; and signals go out only while the conversation is leased (no worker wakes for a message to an idle conversation). Since issue 16 (promises under faults) the running-turn row is sent as soon as a turn starts, alongside the model request (so a crash at any point of a turn is counted), the commit and the delivery are fenced (a turn whose worker lost the lease commits and sends nothing), and the model is reached through the SDK\'s own fetch again (the undici adapter ended workers under the SDK\'s retries on Node 20). Sequential overhead is now timed from the simulated platform posting the webhook (before: from the load generator asking the simulator to post it, one loopback hop earlier). Scheduling is timed from the gateway\'s `storedAt` (the insert\'s commit has answered; interrupt latency starts there too), no longer from the insert\'s start; the old cut is the row under it in "Turns, one at a time". The simulator and the load generator reach the gateway through undici\'s request instead of the global fetch, so the harness takes less of the two cores during a turn.',
    '',
  ];
}
