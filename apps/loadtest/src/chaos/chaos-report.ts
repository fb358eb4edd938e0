import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LoadTestReport } from '../report.ts';
import type { ChaosCheck } from './chaos-checks.ts';
import type { ConversationDump } from './conversation-dump.ts';
import type { InjectedFault } from './fault-injectors.ts';
import type { PlatformReplies, RecoveryFigures } from './reply-analysis.ts';

export interface ChaosReport {
  ok: boolean;
  seed: number;
  profile: string;
  system: { gateways: number; workers: number; platforms: string[] };
  startedAt: string;
  finishedAt: string;
  /** Epoch ms the load began: fault times and the timeline count from here. */
  loadStartedAt: number;
  /** Each fault with its offset and the conversation slowest to recover after it. */
  faults: (InjectedFault & { offsetMs: number; slowestRecovery?: { chat: string; ms: number } | undefined })[];
  faultsByKind: Record<string, number>;
  messages: { sent: number; acknowledged: number; notAcknowledged: number };
  /** Unauthenticated and invalid payloads from the fuzz generators, sent to gateway-0 during the run. */
  fuzz?: { sent: number; byStatus: Record<string, number>; unanswered: number };
  replies: Record<string, PlatformReplies>;
  recovery: Record<string, RecoveryFigures>;
  checks: ChaosCheck[];
  /** Replies recorded per second since loadStartedAt. */
  repliesPerSecond: number[];
  quietAfterMs: number;
  /** Compressions that completed during the run (sessions with a parent): the kills aimed at compression need some. */
  compressions?: number;
  /** Database rows of the first chats with a reordered or lost reply. */
  dumps?: ConversationDump[];
  load: Pick<LoadTestReport, 'turns' | 'errors' | 'endToEndMs'>;
  files?: { json: string; html: string };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The end-of-run table for a terminal: faults by kind with their recovery, then the reply counts per platform, then every check. */
export function renderChaosTable(report: ChaosReport): string {
  const lines = [
    `chaos ${report.profile} seed ${report.seed}: ${report.ok ? 'OK' : 'FAILED'} (${report.system.gateways} gateway(s), ${report.system.workers} worker(s), ${report.system.platforms.join('+')})`,
    `messages sent ${report.messages.sent}, acknowledged ${report.messages.acknowledged}, refused while down ${report.messages.notAcknowledged}; compressions ${report.compressions ?? 0}; idle ${seconds(report.quietAfterMs)} after the load`,
    ...(report.fuzz ? [`fuzzed bad input sent ${report.fuzz.sent} (${Object.entries(report.fuzz.byStatus).map(([status, n]) => `${status}: ${n}`).join(', ')}; unanswered while a gateway was down ${report.fuzz.unanswered})`] : []),
    '',
    pad(['fault', 'injected', 'affected', 'unrecovered', 'max recovery', 'p99 recovery', 'max from start', 'p99 from start']),
    ...Object.entries(report.faultsByKind).map(([kind, n]) => {
      const r = report.recovery[kind];
      return pad([
        kind, String(n), String(r?.affected ?? 0), String(r?.unrecovered ?? 0),
        seconds(r?.maxMs ?? 0), seconds(r?.p99Ms ?? 0), seconds(r?.maxSinceStartMs ?? 0), seconds(r?.p99SinceStartMs ?? 0),
      ]);
    }),
    '',
    pad(['platform', 'owed', 'received', 'lost', 'duplicated', 'reordered', 'model errors']),
    ...Object.entries(report.replies).map(([platform, r]) =>
      pad([platform, String(r.expected), String(r.received), String(r.lost), String(r.duplicated), String(r.outOfOrder), String(r.modelErrorLines)]),
    ),
    '',
    ...report.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}${c.ok ? '' : `: ${c.count} — ${c.samples.join('; ')}`}`),
  ];
  return lines.join('\n');
}

function pad(cells: string[]): string {
  return cells.map((cell, i) => (i === 0 ? cell.padEnd(24) : cell.padStart(16))).join('');
}

export function writeChaosReport(report: ChaosReport, outDir: string): ChaosReport {
  const dir = resolve(outDir);
  mkdirSync(dir, { recursive: true });
  const files = { json: join(dir, 'chaos-report.json'), html: join(dir, 'chaos-report.html') };
  const withFiles = { ...report, files };
  writeFileSync(files.json, `${JSON.stringify(withFiles, null, 2)}\n`);
  writeFileSync(files.html, renderChaosHtml(withFiles));
  return withFiles;
}

const faultColors: Record<string, string> = {
  'worker-kill': '#d62728',
  'gateway-kill': '#ff7f0e',
  'all-sigterm': '#8c564b',
  'redis-restart': '#e377c2',
  'postgres-restart': '#7f7f7f',
  'platform-429': '#bcbd22',
  'platform-5xx': '#17becf',
  'discord-heartbeat-acks': '#9467bd',
  'model-slow': '#2ca02c',
  'model-failing': '#1f77b4',
};

/** One self-contained page (no scripts, nothing fetched), as report-html.ts: the table, the checks and a timeline of throughput with each fault as a band. */
export function renderChaosHtml(report: ChaosReport): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard chaos ${escapeHtml(report.profile)} seed ${report.seed}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:960px}pre{background:#f5f5f5;padding:8px;overflow:auto}
.ok{color:#2a7a2a}.failed{color:#b00}svg{background:#fff;border:1px solid #ddd}</style></head><body>
<h1>Switchboard chaos run <span class="${report.ok ? 'ok' : 'failed'}">${report.ok ? 'OK' : 'FAILED'}</span></h1>
<p>${escapeHtml(report.startedAt)} → ${escapeHtml(report.finishedAt)}</p>
<pre>${escapeHtml(renderChaosTable(report))}</pre>
<h2>Throughput and faults over time</h2>
${renderTimeline(report)}
<h2>Faults</h2>
<pre>${escapeHtml(report.faults.map((f) => `+${seconds(f.offsetMs)} ${f.fault.kind} ${f.fault.target}: ${f.detail}${f.error ? ` ERROR ${f.error}` : ''} (back after ${seconds(f.endedAt - f.startedAt)})`).join('\n'))}</pre>
</body></html>
`;
}

function renderTimeline(report: ChaosReport): string {
  const width = 900;
  const height = 280;
  const pad = { left: 48, right: 12, top: 12, bottom: 60 };
  const innerW = width - pad.left - pad.right;
  const innerH = height - pad.top - pad.bottom;
  const lastFault = report.faults.reduce((max, f) => Math.max(max, f.endedAt - report.loadStartedAt), 0) / 1000;
  const spanS = Math.max(1, report.repliesPerSecond.length, Math.ceil(lastFault));
  const maxValue = Math.max(1, ...report.repliesPerSecond);
  const x = (s: number) => pad.left + (s / spanS) * innerW;
  const y = (v: number) => pad.top + innerH - (v / maxValue) * innerH;
  const bands = report.faults
    .map((f) => {
      const from = (f.startedAt - report.loadStartedAt) / 1000;
      const to = (f.endedAt - report.loadStartedAt) / 1000;
      const color = faultColors[f.fault.kind] ?? '#999';
      return `<rect x="${x(from).toFixed(1)}" y="${pad.top}" width="${Math.max(2, x(to) - x(from)).toFixed(1)}" height="${innerH}" fill="${color}" opacity="0.25"><title>${escapeHtml(`${f.fault.kind} ${f.fault.target}`)}</title></rect>`;
    })
    .join('');
  const points = report.repliesPerSecond.map((v, s) => `${x(s + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const ticks = Array.from({ length: 11 }, (_, i) => Math.round((i * spanS) / 10))
    .map((s) => `<text x="${x(s)}" y="${pad.top + innerH + 14}" font-size="11" text-anchor="middle">${s}s</text>`)
    .join('');
  const kinds = [...new Set(report.faults.map((f) => f.fault.kind))];
  const legend = kinds
    .map((kind, i) => {
      const lx = pad.left + (i % 5) * 170;
      const ly = height - 30 + Math.floor(i / 5) * 16;
      return `<rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${faultColors[kind] ?? '#999'}" opacity="0.6"/><text x="${lx + 14}" y="${ly}" font-size="11">${escapeHtml(kind)}</text>`;
    })
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="replies per second and faults">
<text x="${pad.left - 6}" y="${pad.top + 10}" font-size="11" text-anchor="end">${maxValue}</text><text x="${pad.left - 6}" y="${pad.top + innerH}" font-size="11" text-anchor="end">0</text>
${bands}<polyline fill="none" stroke="#222" stroke-width="1.5" points="${points}"/>${ticks}${legend}</svg>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}
