import type { LatencySummary } from './latency-histogram.ts';
import type { LoadTestReport, TimelinePoint } from './report.ts';

interface Series {
  name: string;
  color: string;
  values: number[];
}

const width = 860;
const height = 260;
const pad = { left: 56, right: 16, top: 16, bottom: 36 };

/**
 * One self-contained page: tables and two inline SVG charts. Nothing is
 * loaded from elsewhere (no CDN; the machines that run this reach only
 * loopback), so the file opens anywhere.
 */
export function renderReportHtml(report: LoadTestReport): string {
  const t = report.timeline;
  const latencyChart = renderLineChart('Latency over time (ms, by the second a line was sent)', t, [
    { name: 'end to end p50', color: '#1f77b4', values: t.map((p) => p.endToEndP50) },
    { name: 'end to end p99', color: '#d62728', values: t.map((p) => p.endToEndP99) },
    { name: 'ack p99', color: '#2ca02c', values: t.map((p) => p.ackP99) },
  ]);
  const throughputChart = renderLineChart('Throughput over time (replies per second)', t, [{ name: 'turns/s', color: '#9467bd', values: t.map((p) => p.turns) }]);
  const r = report.replies;
  const counts: [string, string][] = [
    ['result', report.ok ? 'OK' : 'FAILED'],
    ['conversations started / finished', `${report.conversations.started} / ${report.conversations.finished}`],
    ['turns sent / delivered / answered', `${report.turns.sent} / ${report.turns.delivered} / ${report.turns.answered}`],
    ['duration', `${report.durationS.toFixed(2)} s`],
    ['throughput', `${report.turnsPerSecond.toFixed(2)} turns/s`],
    ['replies expected / received', `${r.expected} / ${r.received}`],
    ['lost / duplicated / out of order', `${r.lost} / ${r.duplicated} / ${r.outOfOrder}`],
    ['mismatched / unexpected / superseded', `${r.mismatched} / ${r.unexpected} / ${r.superseded}`],
    ['errors', `${report.errors.total} ${JSON.stringify(report.errors.byKind)}`],
  ];
  const latencies: [string, LatencySummary][] = [
    ['ack', report.ackMs],
    ['end to end', report.endToEndMs],
    ...(report.overheadMs ? ([['overhead (end to end − model)', report.overheadMs]] as [string, LatencySummary][]) : []),
    ...(Object.keys(report.platforms).length > 1
      ? Object.entries(report.platforms).flatMap(([name, p]): [string, LatencySummary][] => [
          [`${name}: end to end`, p.endToEndMs],
          ...(p.ackMs.count > 0 ? ([[`${name}: ack`, p.ackMs]] as [string, LatencySummary][]) : []),
        ])
      : []),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard load test ${escapeHtml(report.startedAt)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:920px}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}.ok{color:#2a7a2a}.failed{color:#b00}
pre{background:#f5f5f5;padding:8px;overflow:auto}svg{background:#fff;border:1px solid #ddd}
</style></head><body>
<h1>Switchboard load test <span class="${report.ok ? 'ok' : 'failed'}">${report.ok ? 'OK' : 'FAILED'}</span></h1>
<p>${escapeHtml(report.startedAt)} → ${escapeHtml(report.finishedAt)} · ${escapeHtml(report.system.mode)} · ${report.system.gateways} gateway(s)${
    report.system.workers !== undefined ? ` · ${report.system.workers} worker(s)` : ''
  } · busy mode ${escapeHtml(report.system.busyMode)}</p>
<table>${counts.map(([k, v]) => `<tr><td>${escapeHtml(k)}</td><td>${escapeHtml(v)}</td></tr>`).join('')}</table>
<table><tr><th>latency (ms)</th><th>samples</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>${latencies
    .map(([name, s]) => `<tr><td>${escapeHtml(name)}</td><td>${s.count}</td>${[s.p50, s.p95, s.p99, s.max].map((v) => `<td>${v.toFixed(2)}</td>`).join('')}</tr>`)
    .join('')}</table>
${latencyChart}
${throughputChart}
${report.problems.length > 0 ? `<h2>First problems</h2><pre>${escapeHtml(report.problems.slice(0, 50).map((p) => `chat ${p.chatId} turn ${p.turn ?? '-'}: ${p.kind}: ${p.detail}`).join('\n'))}</pre>` : ''}
<h2>Options</h2><pre>${escapeHtml(JSON.stringify(report.options, null, 2))}</pre>
</body></html>
`;
}

function renderLineChart(title: string, timeline: TimelinePoint[], series: Series[]): string {
  const innerW = width - pad.left - pad.right;
  const innerH = height - pad.top - pad.bottom;
  const n = Math.max(1, timeline.length - 1);
  const maxValue = niceCeiling(Math.max(1, ...series.flatMap((s) => s.values)));
  const x = (i: number) => pad.left + (timeline.length <= 1 ? innerW / 2 : (i / n) * innerW);
  const y = (v: number) => pad.top + innerH - (v / maxValue) * innerH;
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * maxValue);
  const xStep = Math.max(1, Math.ceil(timeline.length / 10));
  const grid = yTicks
    .map((v) => `<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/><text x="${pad.left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${formatTick(v)}</text>`)
    .join('');
  const xLabels = timeline
    .filter((_, i) => i % xStep === 0)
    .map((p) => `<text x="${x(p.second)}" y="${height - pad.bottom + 16}" text-anchor="middle" font-size="11">${p.second}s</text>`)
    .join('');
  const lines = series
    .map((s) => {
      const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
      return timeline.length <= 1
        ? `<circle cx="${x(0)}" cy="${y(s.values[0] ?? 0)}" r="3" fill="${s.color}"/>`
        : `<polyline fill="none" stroke="${s.color}" stroke-width="1.5" points="${points}"/>`;
    })
    .join('');
  const legend = series
    .map((s, i) => `<rect x="${pad.left + 10 + i * 150}" y="${height - 14}" width="10" height="10" fill="${s.color}"/><text x="${pad.left + 24 + i * 150}" y="${height - 5}" font-size="11">${escapeHtml(s.name)}</text>`)
    .join('');
  return `<h2>${escapeHtml(title)}</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(title)}">${grid}${xLabels}${lines}${legend}</svg>`;
}

function niceCeiling(value: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 2.5, 5, 10].find((s) => s * magnitude >= value) ?? 10;
  return step * magnitude;
}

function formatTick(value: number): string {
  return value === 0 || value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}
