import { fuzzClasses, type FuzzExample, type FuzzSummary } from './fuzz-types.ts';

const statusList = (byStatus: Record<string, number>) =>
  Object.entries(byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');

/** A plain-text account of a run: per route and class, the statuses; the outcomes; every 5xx, violation and unanswered request listed. */
export function formatFuzzSummary(summary: FuzzSummary, title = 'fuzz'): string {
  const lines = [`${title}: seed ${summary.seed}, tag ${summary.tag}, ${summary.sent} requests in ${(summary.durationMs / 1000).toFixed(1)} s`];
  for (const [route, figures] of Object.entries(summary.byRoute)) {
    if (!figures) continue;
    lines.push(`  ${route.padEnd(9)} ${String(figures.sent).padStart(6)} sent   ${statusList(figures.byStatus)}`);
    for (const cls of fuzzClasses) {
      const c = figures.byClass[cls];
      if (c.sent > 0) lines.push(`    ${cls.padEnd(16)} ${String(c.sent).padStart(6)}   ${statusList(c.byStatus)}`);
    }
    const kinds = Object.entries(figures.byKind).filter(([kind]) => !kind.startsWith('route:') && !kind.startsWith('auth:'));
    if (kinds.length > 0) lines.push(`    kinds: ${statusList(Object.fromEntries(kinds))}`);
    if (Object.keys(figures.outcomes).length > 0) lines.push(`    outcomes: ${statusList(figures.outcomes)}; inbound events claimed ${figures.inboundRowsClaimed}`);
  }
  const examples = (label: string, count: number, list: FuzzExample[]) => {
    lines.push(`  ${label}: ${count}`);
    for (const e of list) {
      lines.push(`    [${e.route} ${e.cls} #${e.seq}] ${e.method} ${e.path} → ${e.status || 'no answer'}: ${e.problem}`);
      lines.push(`      kinds: ${e.kinds.join(', ')}`);
      lines.push(`      request: ${JSON.stringify(e.requestPreview.slice(0, 160))}`);
      lines.push(`      answer:  ${JSON.stringify(e.responsePreview.slice(0, 160))}`);
    }
  };
  examples('5xx', summary.fiveXxCount, summary.fiveXx);
  examples('violations', summary.violationCount, summary.violations);
  examples('no answer', summary.errors.count, summary.errors.examples);
  if (summary.memory.length > 0) {
    lines.push(`  gateway RSS (MiB) by case: ${summary.memory.map((m) => `${m.atCase}:${(m.rssBytes / 1048576).toFixed(0)}`).join(' ')}`);
    lines.push(`  gateway heap used (MiB) by case: ${summary.memory.map((m) => `${m.atCase}:${m.heapUsedBytes === undefined ? '?' : (m.heapUsedBytes / 1048576).toFixed(0)}`).join(' ')}`);
  }
  if (summary.memoryDrift) {
    const d = summary.memoryDrift;
    lines.push(`  memory: highest RSS in the first ${d.warmupCases} cases ${mibText(d.warmupCeilingBytes)}, lowest in the last quarter ${mibText(d.endFloorBytes)}: drift ${mibText(d.driftBytes)}`);
  }
  lines.push(`  health: ${summary.health.ok ? 'ok' : 'NOT OK'} (${summary.health.detail})`);
  return lines.join('\n');
}

const mibText = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
