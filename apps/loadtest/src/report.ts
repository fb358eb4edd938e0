import type { ConversationRun, TurnRecord } from './conversation-runner.ts';
import { summarizeLatencies, type LatencySummary } from './latency-histogram.ts';
import type { LoadTestOptions } from './options.ts';
import type { ReplyCounts, ReplyProblem } from './reply-checker.ts';

export interface TimelinePoint {
  /** Seconds since the first line was sent. */
  second: number;
  /** Replies recorded during this second. */
  turns: number;
  /** Of the lines sent during this second. */
  endToEndP50: number;
  endToEndP99: number;
  ackP50: number;
  ackP99: number;
}

export interface LoadTestReport {
  ok: boolean;
  startedAt: string;
  finishedAt: string;
  system: { mode: 'spawn' | 'target'; simUrl: string; gateways: number; workers?: number; busyMode: string };
  options: Record<string, unknown>;
  conversations: { started: number; finished: number };
  turns: { sent: number; delivered: number; answered: number; timeouts: number };
  /** First line sent → last reply recorded. */
  durationS: number;
  turnsPerSecond: number;
  ackMs: LatencySummary;
  endToEndMs: LatencySummary;
  /** End to end minus the scripted model's own time (only when the simulator's model timings were read). */
  overheadMs?: LatencySummary;
  replies: ReplyCounts;
  errors: { total: number; byKind: Record<string, number>; samples: string[] };
  problems: ReplyProblem[];
  /** The same latencies per platform (Discord has no ack: its ack summary is empty). */
  platforms: Record<string, { conversations: number; answered: number; ackMs: LatencySummary; endToEndMs: LatencySummary }>;
  timeline: TimelinePoint[];
  files?: { json: string; html: string };
}

export interface ReportInput {
  options: LoadTestOptions;
  system: LoadTestReport['system'];
  startedAt: Date;
  finishedAt: Date;
  runs: ConversationRun[];
  finished: number;
  replies: ReplyCounts;
  problems: ReplyProblem[];
  errors: LoadTestReport['errors'];
  /** Model time per human line, from the simulator's request log. */
  modelMsByLine?: Map<string, number>;
}

export function buildReport(input: ReportInput): LoadTestReport {
  const records = input.runs.flatMap((run) => run.records.filter((record): record is TurnRecord => record !== undefined));
  const delivered = records.filter((record) => record.delivered);
  const answered = records.filter((record) => record.repliedAt !== undefined);
  // reduce, not Math.min(...): a long run has more records than a call may have arguments.
  const firstSent = records.reduce((min, record) => Math.min(min, record.sentAt), Number.POSITIVE_INFINITY);
  const lastReply = answered.reduce((max, record) => Math.max(max, record.repliedAt as number), 0);
  const durationS = answered.length > 0 ? Math.max(0.001, (lastReply - firstSent) / 1000) : 0;
  const endToEnd = (record: TurnRecord) => Math.max(0, (record.repliedAt as number) - record.sentAt);

  let overheadMs: LatencySummary | undefined;
  if (input.modelMsByLine) {
    const overheads: number[] = [];
    for (const run of input.runs) {
      for (const record of run.records) {
        if (record?.repliedAt === undefined) continue;
        const modelMs = input.modelMsByLine.get(run.script.turns[record.turn]?.human ?? '');
        if (modelMs !== undefined) overheads.push(Math.max(0, endToEnd(record) - modelMs));
      }
    }
    overheadMs = summarizeLatencies(overheads);
  }

  const { replies, errors } = input;
  const ok = replies.lost + replies.duplicated + replies.outOfOrder + replies.mismatched + replies.unexpected + errors.total === 0 && answered.length > 0;
  return {
    ok,
    startedAt: input.startedAt.toISOString(),
    finishedAt: input.finishedAt.toISOString(),
    system: input.system,
    options: describeOptions(input.options),
    conversations: { started: input.runs.length, finished: input.finished },
    turns: { sent: records.length, delivered: delivered.length, answered: answered.length, timeouts: input.runs.reduce((n, run) => n + run.timeouts, 0) },
    durationS: round(durationS),
    turnsPerSecond: durationS > 0 ? round(answered.length / durationS) : 0,
    ackMs: summarizeLatencies(acks(delivered)),
    endToEndMs: summarizeLatencies(answered.map(endToEnd)),
    ...(overheadMs ? { overheadMs } : {}),
    replies,
    errors,
    problems: input.problems,
    platforms: summarizePlatforms(input.runs),
    timeline: buildTimeline(records, firstSent),
  };
}

const acks = (records: TurnRecord[]) => records.flatMap((record) => (record.ackMs === undefined ? [] : [record.ackMs]));

function summarizePlatforms(runs: ConversationRun[]): LoadTestReport['platforms'] {
  const platforms: LoadTestReport['platforms'] = {};
  for (const name of new Set(runs.map((run) => run.chat.platform))) {
    const mine = runs.filter((run) => run.chat.platform === name);
    const records = mine.flatMap((run) => run.records.filter((record): record is TurnRecord => record !== undefined));
    const answered = records.filter((record) => record.repliedAt !== undefined);
    platforms[name] = {
      conversations: mine.length,
      answered: answered.length,
      ackMs: summarizeLatencies(acks(records.filter((record) => record.delivered))),
      endToEndMs: summarizeLatencies(answered.map((record) => Math.max(0, (record.repliedAt as number) - record.sentAt))),
    };
  }
  return platforms;
}

function buildTimeline(records: TurnRecord[], firstSent: number): TimelinePoint[] {
  const buckets: { turns: number; endToEnd: number[]; ack: number[] }[] = [];
  const bucket = (at: number) => {
    const second = Math.max(0, Math.floor((at - firstSent) / 1000));
    while (buckets.length <= second) buckets.push({ turns: 0, endToEnd: [], ack: [] });
    return buckets[second] as { turns: number; endToEnd: number[]; ack: number[] };
  };
  for (const record of records) {
    if (record.delivered && record.ackMs !== undefined) bucket(record.sentAt).ack.push(record.ackMs);
    if (record.repliedAt === undefined) continue;
    bucket(record.repliedAt).turns += 1;
    bucket(record.sentAt).endToEnd.push(record.repliedAt - record.sentAt);
  }
  return buckets.map((b, second) => ({
    second,
    turns: b.turns,
    endToEndP50: percentile(b.endToEnd, 50),
    endToEndP99: percentile(b.endToEnd, 99),
    ackP50: percentile(b.ack, 50),
    ackP99: percentile(b.ack, 99),
  }));
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);
}

function describeOptions(options: LoadTestOptions): Record<string, unknown> {
  const { target: _target, spawn, progress: _progress, ...rest } = options;
  const pacing = options.pacing.kind === 'rate' ? `rate:${options.pacing.turnsPerSecond}` : options.pacing.kind === 'think' ? `think:${options.pacing.thinkMs}` : 'reply';
  return { ...rest, pacing, ...(spawn ? { spawn: { gateways: spawn.gateways, workers: spawn.workers } } : {}) };
}

const round = (n: number) => Math.round(n * 100) / 100;

/** The end-of-run summary for a terminal. */
export function renderReportTable(report: LoadTestReport): string {
  const f = (n: number) => n.toFixed(2);
  const lat = (name: string, s: LatencySummary) => [name, String(s.count), f(s.p50), f(s.p95), f(s.p99), f(s.max)];
  const latencyRows = [
    ['latency (ms)', 'samples', 'p50', 'p95', 'p99', 'max'],
    lat('ack (gateway answer to the webhook)', report.ackMs),
    lat('end to end (sent → reply at the platform)', report.endToEndMs),
    ...(report.overheadMs ? [lat('overhead (end to end − model time)', report.overheadMs)] : []),
  ];
  const r = report.replies;
  const countRows = [
    ['figure', 'value'],
    ['conversations (started / finished)', `${report.conversations.started} / ${report.conversations.finished}`],
    ['turns (sent / delivered / answered)', `${report.turns.sent} / ${report.turns.delivered} / ${report.turns.answered}`],
    ['duration (first send → last reply)', `${f(report.durationS)} s`],
    ['throughput', `${f(report.turnsPerSecond)} turns/s`],
    ['replies expected / received', `${r.expected} / ${r.received}`],
    ['lost', String(r.lost)],
    ['duplicated', String(r.duplicated)],
    ['out of order', String(r.outOfOrder)],
    ['mismatched / unexpected', `${r.mismatched} / ${r.unexpected}`],
    ['superseded (interrupt mode, not owed)', String(r.superseded)],
    ['errors', `${report.errors.total}${report.errors.total > 0 ? ` (${Object.entries(report.errors.byKind).map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}`],
  ];
  const platforms = Object.entries(report.platforms);
  if (platforms.length > 1) {
    for (const [name, p] of platforms) {
      latencyRows.push(lat(`${name}: end to end (${p.conversations} conversations)`, p.endToEndMs));
      if (p.ackMs.count > 0) latencyRows.push(lat(`${name}: ack`, p.ackMs));
    }
  }
  const lines = [renderTable(countRows), '', renderTable(latencyRows)];
  if (report.problems.length > 0) {
    lines.push('', 'first problems:', ...report.problems.slice(0, 10).map((p) => `  chat ${p.chatId}${p.turn !== undefined ? ` turn ${p.turn}` : ''}: ${p.kind}: ${p.detail}`));
  }
  lines.push('', report.ok ? 'result: OK — every owed reply arrived once and in order' : 'result: FAILED — see the counts above');
  return lines.join('\n');
}

function renderTable(rows: string[][]): string {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length))) ?? [];
  const line = (row: string[]) => row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col] ?? 0) : cell.padStart(widths[col] ?? 0))).join('  ');
  return [line(rows[0] ?? []), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}
