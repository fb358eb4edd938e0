import type postgres from 'postgres';
import type { FuzzSummary } from './fuzz-types.ts';
import { fuzzProblems, runFuzz, type FuzzOptions } from './run-fuzz.ts';

/** Every table a request could write to. */
const tables = ['conversations', 'sessions', 'inbound_events', 'messages', 'turns', 'outbox', 'audit_log', 'lifecycle_events', 'pairings', 'paired_users', 'schedules'] as const;
/** What an unpaired user's DM must never create under DM_POLICY=pairing: stored input, a turn, a model session. */
const inputTables = ['inbound_events', 'messages', 'turns', 'sessions'] as const;
type RowCounts = Record<(typeof tables)[number], number>;

export interface PhasedFuzzResult {
  /** Phase 1: only unauthenticated and invalid cases. */
  refused: FuzzSummary;
  /** Phase 2: only authentic cases. */
  authentic: FuzzSummary;
  rows: {
    beforeRefused: RowCounts;
    afterRefused: RowCounts;
    afterAuthentic: RowCounts;
    /** Inbound events the phase-2 answers say were stored, against the rows that appeared. */
    inboundClaimed: number;
    inboundWritten: number;
    /** Audit rows phase 2 wrote whose actor is not a configured token name. */
    auditRowsByStrangers: number;
  };
  /** Under DM_POLICY=pairing (target.pairing): the pairing rows the run left, and the slot cap as seen through it. */
  pairing?: PairingFigures;
  /** Gateway RSS (bytes): at the start, the highest and the last reading; the drift of each phase (runFuzz's memoryDrift). */
  rss: { atStart: number | undefined; peak: number | undefined; atEnd: number | undefined; driftRefused: number | undefined; driftAuthentic: number | undefined };
  problems: string[];
}

async function countRows(sql: postgres.Sql): Promise<RowCounts> {
  const [row] = await sql<[RowCounts]>`
    select
      (select count(*)::int from conversations) as conversations,
      (select count(*)::int from sessions) as sessions,
      (select count(*)::int from inbound_events) as inbound_events,
      (select count(*)::int from messages) as messages,
      (select count(*)::int from turns) as turns,
      (select count(*)::int from outbox) as outbox,
      (select count(*)::int from audit_log) as audit_log,
      (select count(*)::int from lifecycle_events) as lifecycle_events,
      (select count(*)::int from pairings) as pairings,
      (select count(*)::int from paired_users) as paired_users,
      (select count(*)::int from schedules) as schedules`;
  return row;
}

/** Pairing rows by platform and status, and the most codes pending at once on one platform seen by any probe. */
export interface PairingFigures {
  byStatus: Record<string, Record<string, number>>;
  maxPendingSeen: number;
  probes: number;
}

/** Reads the pending (unexpired) codes per platform, keeping the highest count seen: called through the run (runFuzz's probe). */
function createPairingProbe(sql: postgres.Sql): { figures: PairingFigures; probe: () => Promise<void> } {
  const figures: PairingFigures = { byStatus: {}, maxPendingSeen: 0, probes: 0 };
  const probe = async () => {
    const rows = await sql<{ n: number }[]>`select count(*)::int as n from pairings where status = 'pending' and expires_at > now() group by platform`;
    figures.maxPendingSeen = Math.max(figures.maxPendingSeen, ...rows.map((r) => r.n));
    figures.probes++;
  };
  return { figures, probe };
}

async function readPairingStatuses(sql: postgres.Sql): Promise<PairingFigures['byStatus']> {
  const rows = await sql<{ platform: string; status: string; n: number }[]>`select platform, status, count(*)::int as n from pairings group by platform, status`;
  const byStatus: PairingFigures['byStatus'] = {};
  for (const row of rows) (byStatus[row.platform] ??= {})[row.status] = row.n;
  return byStatus;
}

/**
 * The fuzz run with the database watched (a gateway of our own, nothing else
 * writing): first every unauthenticated and invalid case, after which not
 * one row may have appeared in any table; then the authentic cases, after
 * which exactly one inbound event must exist per answer that claimed one
 * (`accepted` or `refused`, a deferred Discord command) and every audit row
 * must name a configured actor. Memory is checked per phase (each sends one
 * kind of traffic throughout): the end's floor against the warm-up's ceiling.
 */
export async function runFuzzWithRowChecks(options: FuzzOptions & { sql: postgres.Sql; maxRssGrowthBytes?: number }): Promise<PhasedFuzzResult> {
  const pairingProbe = options.target.pairing ? createPairingProbe(options.sql) : undefined;
  const probe = pairingProbe?.probe;
  const beforeRefused = await countRows(options.sql);
  const refused = await runFuzz({ ...options, classes: ['unauthenticated', 'invalid'], ...(probe ? { probe } : {}) });
  const afterRefused = await countRows(options.sql);
  const authentic = await runFuzz({ ...options, classes: ['authentic'], ...(probe ? { probe } : {}) });
  const afterAuthentic = await countRows(options.sql);
  if (pairingProbe) pairingProbe.figures.byStatus = await readPairingStatuses(options.sql);

  const actors = new Set((options.target.admin?.tokens ?? []).map((t) => t.name));
  const auditActors = await options.sql<{ actor: string; n: number }[]>`select actor, count(*)::int as n from audit_log group by actor`;
  const auditRowsByStrangers = auditActors.filter((row) => !actors.has(row.actor)).reduce((sum, row) => sum + row.n, 0);
  const inboundClaimed = Object.values(authentic.byRoute).reduce((sum, figures) => sum + (figures?.inboundRowsClaimed ?? 0), 0);
  const inboundWritten = afterAuthentic.inbound_events - afterRefused.inbound_events;

  const samples = [...refused.memory, ...authentic.memory];
  const peak = Math.max(...samples.map((m) => m.rssBytes));
  const rss = {
    atStart: samples[0]?.rssBytes,
    peak: Number.isFinite(peak) ? peak : undefined,
    atEnd: samples[samples.length - 1]?.rssBytes,
    driftRefused: refused.memoryDrift?.driftBytes,
    driftAuthentic: authentic.memoryDrift?.driftBytes,
  };

  const problems = [...fuzzProblems(refused).map((p) => `unauthenticated/invalid: ${p}`), ...fuzzProblems(authentic).map((p) => `authentic: ${p}`)];
  const written = tables.filter((t) => afterRefused[t] !== beforeRefused[t]);
  if (written.length > 0) problems.push(`unauthenticated or invalid requests wrote rows: ${written.map((t) => `${t} ${beforeRefused[t]} → ${afterRefused[t]}`).join(', ')}`);
  if (inboundWritten !== inboundClaimed) problems.push(`authentic requests: ${inboundClaimed} answers claimed a stored event, ${inboundWritten} inbound events appeared`);
  // Every schedule the fuzzer asks for names a conversation past 2^40 (schedule-route-shapes.ts): none may come to exist.
  if (afterAuthentic.schedules !== afterRefused.schedules) problems.push(`authentic requests made ${afterAuthentic.schedules - afterRefused.schedules} schedules, though none named a conversation that exists`);
  if (auditRowsByStrangers > 0) problems.push(`${auditRowsByStrangers} audit rows name an actor that is not a configured token`);
  if (pairingProbe && options.target.pairing) problems.push(...pairingProblems(pairingProbe.figures, options.target.pairing.maxPendingPerPlatform, { before: afterRefused, after: afterAuthentic }));
  for (const [phase, drift] of [['unauthenticated/invalid', rss.driftRefused], ['authentic', rss.driftAuthentic]] as const) {
    if (options.maxRssGrowthBytes !== undefined && drift !== undefined && drift > options.maxRssGrowthBytes) {
      problems.push(`${phase}: gateway RSS at the end stayed ${mib(drift)} MiB above the warm-up's highest reading (allowed ${mib(options.maxRssGrowthBytes)})`);
    }
  }
  if (options.maxRssGrowthBytes !== undefined && (rss.driftRefused === undefined || rss.driftAuthentic === undefined)) problems.push('the gateway’s /metrics gave no memory readings');
  return { refused, authentic, rows: { beforeRefused, afterRefused, afterAuthentic, inboundClaimed, inboundWritten, auditRowsByStrangers }, ...(pairingProbe ? { pairing: pairingProbe.figures } : {}), rss, problems };
}

/**
 * Under DM_POLICY=pairing with nobody allowlisted (docs/admin.md, "Pairing"):
 * no probe ever saw more codes pending on one platform than the cap, no
 * unpaired user's DM became stored input, a turn or a session, and no one
 * was paired (the fuzzer never knows a code).
 */
function pairingProblems(figures: PairingFigures, cap: number, rows: { before: RowCounts; after: RowCounts }): string[] {
  const problems: string[] = [];
  if (figures.maxPendingSeen > cap) problems.push(`pairing: ${figures.maxPendingSeen} codes were pending at once on one platform (the cap is ${cap})`);
  const grew = inputTables.filter((t) => rows.after[t] !== rows.before[t]);
  if (grew.length > 0) problems.push(`pairing: unpaired users' DMs created ${grew.map((t) => `${t} ${rows.before[t]} → ${rows.after[t]}`).join(', ')}`);
  if (rows.after.paired_users !== rows.before.paired_users) problems.push(`pairing: ${rows.after.paired_users - rows.before.paired_users} users were paired by fuzzed requests`);
  return problems;
}

export const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
