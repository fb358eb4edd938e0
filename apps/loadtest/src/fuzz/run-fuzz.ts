import fc from 'fast-check';
import { request } from 'undici';
import { adminCases } from './admin-cases.ts';
import { discordCases } from './discord-cases.ts';
import {
  fuzzClasses,
  fuzzRoutes,
  type BuiltRequest,
  type CaseContext,
  type FuzzCase,
  type FuzzClass,
  type FuzzExample,
  type FuzzRoute,
  type FuzzSummary,
  type FuzzTarget,
  type MemorySample,
  type RouteFigures,
} from './fuzz-types.ts';
import { hookCases } from './hook-cases.ts';
import { pairingCases } from './pairing-cases.ts';
import { createSender, type Answer } from './send-request.ts';
import { slackCases } from './slack-cases.ts';
import { telegramCases } from './telegram-cases.ts';

export const routeArbitraries: Record<FuzzRoute, fc.Arbitrary<FuzzCase>> = { slack: slackCases, telegram: telegramCases, discord: discordCases, admin: adminCases, pairing: pairingCases, hooks: hookCases };

export interface FuzzOptions {
  target: FuzzTarget;
  seed: number;
  /** Cases per route (all classes together), or a count for each route. Routes without credentials in `target` are skipped. */
  perRoute: number | Partial<Record<FuzzRoute, number>>;
  /** Send only the cases of these classes (the rest of the stream is generated, then skipped, so a seed means the same cases). */
  classes?: readonly FuzzClass[];
  /** Requests in flight at once (default 6). */
  concurrency?: number;
  /** Digits unique to the run, in every id (default: from the seed). */
  tag?: string;
  /** The first cases, whose highest memory reading is the baseline (default: a fifth of the run). */
  warmupCases?: number;
  /** Examples kept per list (default 20). */
  maxExamples?: number;
  signal?: AbortSignal;
  /** Called at each memory sample (and at the end), in order: a caller reads the database through the run (the pairing slot cap). */
  probe?: () => Promise<void>;
  onProgress?: (done: number, total: number) => void;
}

interface PlannedCase {
  fuzzCase: FuzzCase;
  seq: number;
}

/** The cases a seed stands for, route by route: the same seed always gives the same cases, whatever `classes` later picks. */
export function planFuzzCases(options: Pick<FuzzOptions, 'target' | 'seed' | 'perRoute' | 'classes'>): Record<FuzzRoute, PlannedCase[]> {
  const planned = {} as Record<FuzzRoute, PlannedCase[]>;
  for (const route of fuzzRoutes) {
    const count = typeof options.perRoute === 'number' ? options.perRoute : (options.perRoute[route] ?? 0);
    const enabled = route === 'admin' ? options.target.admin : options.target[route];
    if (!enabled || count <= 0) {
      planned[route] = [];
      continue;
    }
    const cases = fc.sample(routeArbitraries[route], { seed: routeSeed(options.seed, route), numRuns: count });
    planned[route] = cases
      .map((fuzzCase, seq) => ({ fuzzCase, seq }))
      .filter(({ fuzzCase }) => (!options.classes || options.classes.includes(fuzzCase.cls)) && (fuzzCase.needs === undefined || options.target[fuzzCase.needs] !== undefined));
  }
  return planned;
}

function routeSeed(seed: number, route: FuzzRoute): number {
  return (seed ^ (fuzzRoutes.indexOf(route) * 0x9e3779b1)) | 0;
}

/** The digits every generated id carries: from the seed unless given. */
export function defaultTag(seed: number): string {
  return String((Math.abs(seed) % 899_999) + 100_000);
}

/**
 * Sends the seed's cases to a running gateway, the routes interleaved, a few
 * requests in flight, and sums up what came back: statuses by route, class
 * and kind; every 5xx; answers a class forbids; requests that got no answer;
 * the gateway's memory through the run; whether it is still up and the same
 * process afterwards. Never throws for what the gateway answers: the caller
 * decides what fails (`fuzzProblems`).
 */
export async function runFuzz(options: FuzzOptions): Promise<FuzzSummary> {
  const startedAt = performance.now();
  const tag = options.tag ?? defaultTag(options.seed);
  const planned = planFuzzCases(options);
  const queue = interleave(fuzzRoutes.map((route) => planned[route]));
  const warmup = options.warmupCases ?? Math.floor(queue.length / 5);
  const summary = emptySummary(options.seed, tag);
  const before = await readProcessMetrics(options.target.baseUrl);
  if (before) summary.memory.push({ atCase: 0, rssBytes: before.rssBytes, heapUsedBytes: before.heapUsedBytes });

  const done = await sendCases({ options, queue, tag, warmup, summary });
  await options.probe?.();
  const after = await readProcessMetrics(options.target.baseUrl);
  if (after) summary.memory.push({ atCase: done, rssBytes: after.rssBytes, heapUsedBytes: after.heapUsedBytes });
  summary.memoryDrift = measureDrift(summary.memory, warmup, done);
  summary.health = await checkHealth(options.target.baseUrl, before?.startTimeSeconds, after?.startTimeSeconds);
  summary.durationMs = Math.round(performance.now() - startedAt);
  return summary;
}

function emptySummary(seed: number, tag: string): FuzzSummary {
  return {
    seed,
    tag,
    sent: 0,
    durationMs: 0,
    byRoute: {},
    fiveXx: [],
    fiveXxCount: 0,
    violations: [],
    violationCount: 0,
    errors: { count: 0, byCode: {}, examples: [] },
    memory: [],
    memoryDrift: undefined,
    health: { ok: false, restarted: false, detail: '' },
  };
}

interface FuzzRun {
  options: FuzzOptions;
  queue: PlannedCase[];
  tag: string;
  /** Cases sent before the warm-up's memory ceiling is read. */
  warmup: number;
  summary: FuzzSummary;
}

/** Sends the queue a few requests at a time, recording every answer and sampling the gateway's memory along the way; returns how many were sent. */
async function sendCases({ options, queue, tag, warmup, summary }: FuzzRun): Promise<number> {
  const maxExamples = options.maxExamples ?? 20;
  const concurrency = options.concurrency ?? 6;
  const sampleEvery = Math.max(25, Math.floor(queue.length / 40));
  const sender = createSender(options.target.baseUrl, concurrency);
  const guessing = options.target.guessingAddresses ?? defaultGuessingAddresses(options.target.baseUrl);
  let next = 0;
  let done = 0;
  let sampling: Promise<void> = Promise.resolve();
  const worker = async () => {
    while (next < queue.length && !options.signal?.aborted) {
      const item = queue[next++] as PlannedCase;
      const ctx: CaseContext = { seq: item.seq, tag, target: options.target, nowMs: Date.now() };
      const built = item.fuzzCase.build(ctx);
      const source = built.guessing && guessing.length > 0 ? guessing[(item.seq * 7919) % guessing.length] : undefined;
      const refusedOnHead = item.fuzzCase.kinds.includes('bad-auth');
      const answer = excuseEarlyClose(await sender.send(built, source), built, options.target.bodyLimitBytes ?? 1024 * 1024, refusedOnHead);
      record(summary, { item, built, answer }, maxExamples);
      done++;
      options.onProgress?.(done, queue.length);
      if (done === warmup || done % sampleEvery === 0) {
        const at = done;
        sampling = sampling.then(async () => {
          const sample = await readProcessMetrics(options.target.baseUrl);
          if (sample) summary.memory.push({ atCase: at, rssBytes: sample.rssBytes, heapUsedBytes: sample.heapUsedBytes });
          await options.probe?.();
        });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, queue.length)) }, worker));
    await sampling;
  } finally {
    await sender.close();
  }
  return done;
}

/**
 * A body past the limit is refused (413) as soon as its Content-Length is
 * read, and the connection closed with the rest unread; the client may then
 * fail writing it (EPIPE), or the 413 may be lost to the reset. That is the
 * gateway refusing the request, not failing to answer: counted as `closed`.
 * The same holds for a request with bad credentials on a route that checks
 * them on the head (Telegram's secret token, the admin API): its 401 goes out
 * before the body is read, and on a `Connection: close` socket the kernel's
 * reset for the unread body can reach the client before the 401 does (seen
 * once under load: EPIPE on a deep unauthenticated Telegram body).
 * (A gateway that died instead would fail the health check after the run.)
 */
function excuseEarlyClose(answer: Answer, built: BuiltRequest, bodyLimit: number, refusedOnHead: boolean): Answer {
  if (answer.error === undefined || (!refusedOnHead && (built.body?.length ?? 0) <= bodyLimit)) return answer;
  return ['EPIPE', 'ECONNRESET', 'UND_ERR_SOCKET'].includes(answer.error) ? { status: 'closed', body: '' } : answer;
}

function interleave<T>(lists: T[][]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) out.push(list[i] as T);
  return out;
}

function defaultGuessingAddresses(baseUrl: string): string[] {
  const host = new URL(baseUrl).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost') return [];
  const addresses: string[] = [];
  for (let third = 1; third <= 4; third++) for (let fourth = 1; fourth <= 254; fourth++) addresses.push(`127.0.${third}.${fourth}`);
  return addresses;
}

function emptyFigures(): RouteFigures {
  return {
    sent: 0,
    byStatus: {},
    byClass: Object.fromEntries(fuzzClasses.map((cls) => [cls, { sent: 0, byStatus: {} }])) as RouteFigures['byClass'],
    byKind: {},
    outcomes: {},
    inboundRowsClaimed: 0,
  };
}

/** One case as it was sent and what came back. */
interface Exchange {
  item: PlannedCase;
  built: BuiltRequest;
  answer: Answer;
}

function record(summary: FuzzSummary, { item, built, answer }: Exchange, maxExamples: number): void {
  const { fuzzCase } = item;
  const figures = (summary.byRoute[fuzzCase.route] ??= emptyFigures());
  const status = String(answer.status);
  summary.sent++;
  figures.sent++;
  figures.byStatus[status] = (figures.byStatus[status] ?? 0) + 1;
  const byClass = figures.byClass[fuzzCase.cls];
  byClass.sent++;
  byClass.byStatus[status] = (byClass.byStatus[status] ?? 0) + 1;
  for (const kind of fuzzCase.kinds) figures.byKind[kind] = (figures.byKind[kind] ?? 0) + 1;

  const claimed = readOutcome(fuzzCase, answer, figures);
  const example = (problem: string): FuzzExample => ({
    route: fuzzCase.route,
    cls: fuzzCase.cls,
    seq: item.seq,
    kinds: fuzzCase.kinds,
    method: built.method,
    path: built.path.slice(0, 200),
    status: typeof answer.status === 'number' ? answer.status : 0,
    problem,
    requestPreview: (built.body ?? Buffer.alloc(0)).subarray(0, 300).toString('utf8'),
    responsePreview: answer.body.slice(0, 300),
  });

  if (answer.error !== undefined) {
    summary.errors.count++;
    summary.errors.byCode[answer.error] = (summary.errors.byCode[answer.error] ?? 0) + 1;
    if (summary.errors.examples.length < maxExamples) summary.errors.examples.push(example(`no answer: ${answer.error}`));
    return;
  }
  if (typeof answer.status === 'number' && answer.status >= 500) {
    summary.fiveXxCount++;
    if (summary.fiveXx.length < maxExamples) summary.fiveXx.push(example(`${answer.status} from the gateway`));
    return;
  }
  const violation = classViolation(fuzzCase, answer, claimed);
  if (violation) {
    summary.violationCount++;
    if (summary.violations.length < maxExamples) summary.violations.push(example(violation));
  }
}

/** What a webhook answer says happened; true when it says an inbound event was stored. */
function readOutcome(fuzzCase: FuzzCase, answer: Answer, figures: RouteFigures): boolean {
  if (isAdminCase(fuzzCase) || answer.status !== 200) return false;
  let body: { outcome?: unknown; ignored?: unknown; type?: unknown; challenge?: unknown };
  try {
    body = JSON.parse(answer.body) as typeof body;
  } catch {
    return false;
  }
  const outcome =
    typeof body.outcome === 'string' ? body.outcome : typeof body.ignored === 'string' ? `ignored:${body.ignored}` : body.type !== undefined ? `discord-type-${String(body.type)}` : body.challenge !== undefined ? 'challenge' : 'other';
  figures.outcomes[outcome] = (figures.outcomes[outcome] ?? 0) + 1;
  // A deferred Discord answer (type 5) means the command was stored (the run has no duplicate interaction ids), except under
  // DM_POLICY=pairing: an unpaired user's command is deferred too (the code follows through the token) and never stored.
  const stored = outcome === 'accepted' || outcome === 'refused' || (outcome === 'discord-type-5' && fuzzCase.route !== 'pairing');
  if (stored) figures.inboundRowsClaimed++;
  return stored;
}

function classViolation(fuzzCase: FuzzCase, answer: Answer, stored: boolean): string | undefined {
  const status = answer.status;
  if (status === 'none' || status === 'closed') return undefined;
  if (fuzzCase.cls === 'unauthenticated' && status < 400) return `answered ${status} to a request without valid credentials`;
  if (fuzzCase.cls === 'invalid' && (stored || (isAdminCase(fuzzCase) && status < 400))) return `served an invalid request (${status})`;
  if (fuzzCase.cls === 'authentic' && status === 401 && !fuzzCase.mayBeRefused) return 'refused valid credentials with 401 (the fuzzer signs differently from the gateway?)';
  return undefined;
}

/** A request to the admin API: the `admin` route's, or a `pairing` case sent there. */
const isAdminCase = (fuzzCase: FuzzCase) => fuzzCase.route === 'admin' || fuzzCase.needs === 'admin';

interface ProcessMetrics {
  rssBytes: number;
  heapUsedBytes: number | undefined;
  startTimeSeconds: number | undefined;
}

/** The gateway's own prom-client process figures (prefixed `switchboard_gateway_`; any prefix is taken). */
export async function readProcessMetrics(baseUrl: string): Promise<ProcessMetrics | undefined> {
  try {
    const answer = await request(new URL('/metrics', baseUrl), { headersTimeout: 10_000, bodyTimeout: 10_000 });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) return undefined;
    const value = (name: string) => {
      const match = new RegExp(`^\\w*${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
      return match ? Number(match[1]) : undefined;
    };
    const rssBytes = value('process_resident_memory_bytes');
    if (rssBytes === undefined) return undefined;
    return { rssBytes, heapUsedBytes: value('nodejs_heap_size_used_bytes'), startTimeSeconds: value('process_start_time_seconds') };
  } catch {
    return undefined;
  }
}

async function checkHealth(baseUrl: string, startBefore: number | undefined, startAfter: number | undefined): Promise<FuzzSummary['health']> {
  let status = 0;
  try {
    const answer = await request(new URL('/healthz', baseUrl), { headersTimeout: 10_000, bodyTimeout: 10_000 });
    await answer.body.dump();
    status = answer.statusCode;
  } catch (error) {
    return { ok: false, restarted: false, detail: `/healthz did not answer: ${(error as Error).message}` };
  }
  const restarted = startBefore !== undefined && startAfter !== undefined && startBefore !== startAfter;
  const ok = status === 200 && !restarted;
  return { ok, restarted, detail: restarted ? `process start time changed from ${startBefore} to ${startAfter}` : `/healthz answered ${status}` };
}

/**
 * How far the gateway's resident memory rose, read so that garbage and
 * buffers in flight do not count: the lowest reading in the last quarter of
 * the run against the highest during the warm-up, which sent the same kind
 * of traffic. Memory that is released again leaves the floor at or below the
 * warm-up's ceiling; memory kept per request lifts the floor past it. Negative
 * when the end is lower.
 */
function measureDrift(samples: readonly MemorySample[], warmup: number, total: number): FuzzSummary['memoryDrift'] {
  const during = samples.filter((m) => m.atCase <= warmup);
  const lastQuarter = samples.filter((m) => m.atCase >= total * 0.75);
  if (during.length === 0 || lastQuarter.length === 0) return undefined;
  const warmupCeilingBytes = Math.max(...during.map((m) => m.rssBytes));
  const endFloorBytes = Math.min(...lastQuarter.map((m) => m.rssBytes));
  return { warmupCases: warmup, warmupCeilingBytes, endFloorBytes, driftBytes: endFloorBytes - warmupCeilingBytes };
}

/** One line per thing that should fail the run: 5xx, violations, unanswered requests, a gateway down or restarted. */
export function fuzzProblems(summary: FuzzSummary): string[] {
  const problems: string[] = [];
  if (summary.fiveXxCount > 0) problems.push(`${summary.fiveXxCount} answers were 5xx`);
  if (summary.violationCount > 0) problems.push(`${summary.violationCount} answers broke their class's rule`);
  if (summary.errors.count > 0) problems.push(`${summary.errors.count} requests got no answer (${Object.entries(summary.errors.byCode).map(([code, n]) => `${code} ${n}`).join(', ')})`);
  if (!summary.health.ok) problems.push(`the gateway is not healthy after the run: ${summary.health.detail}`);
  return problems;
}
