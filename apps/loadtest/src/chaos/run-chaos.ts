import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { repoRoot, startPostgres, startRedis, type PostgresServer, type RedisServer } from '@switchboard/harness';
import { benchSlack, benchWebhookSecret, startSystemUnderTest, type SystemUnderTest } from '../bench/system-under-test.ts';
import { runFuzz, type FuzzSummary } from '../fuzz/index.ts';
import type { ConversationRun } from '../conversation-runner.ts';
import { createDrivers } from '../drivers/create-drivers.ts';
import type { PlatformName } from '../drivers/platform-driver.ts';
import type { LoadTarget } from '../options.ts';
import { createLoadTestOptions } from '../options.ts';
import { runLoadTest } from '../run-load-test.ts';
import { defaultTranscriptPath } from '../transcripts.ts';
import { judgeChaosRun } from './chaos-checks.ts';
import { writeChaosReport, type ChaosReport } from './chaos-report.ts';
import type { ChaosTarget } from './chaos-target.ts';
import { injectFault, type InjectedFault } from './fault-injectors.ts';
import { generateFaultSchedule, profiles, type ChaosProfile, type FaultKind, type ProfileName, type ScheduledFault } from './fault-schedule.ts';
import { countRepliesByPlatform, countRepliesPerSecond, findSlowestRecoveries, measureRecovery, type RepliesByChat } from './reply-analysis.ts';
import { dumpConversations } from './conversation-dump.ts';
import { checkStore, waitForQuiet } from './store-checks.ts';

export interface ChaosOptions {
  seed: number;
  profile: ProfileName;
  gateways: number;
  workers: number;
  /** Overrides the profile's length. */
  durationS?: number;
  /** Overrides the profile's fault count. */
  faults?: number;
  /** Overrides the profile's kinds (drawn by weight, as the long profile does, or in order for the short one). */
  kinds?: readonly FaultKind[];
  outDir?: string;
  transcripts?: string;
  /** Kinds left out of the schedule (the test leaves out one whose known bug is recorded in docs/guarantees.md). */
  skipKinds?: readonly FaultKind[];
  log?: (line: string) => void;
}

const platforms: PlatformName[] = ['telegram', 'slack', 'discord'];

/**
 * A private Postgres and Redis (the chaos run kills them; never the test
 * run's shared ones), the whole system as real processes, the transcript
 * replay on all three platforms with bursts, and the seeded faults played
 * alongside. Then waits for the system to go idle, checks, reports.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const profile = resolveProfile(options);
  const schedule = generateFaultSchedule(options.seed, profile, options).filter((f) => !options.skipKinds?.includes(f.kind));
  const outDir = options.outDir ?? join(repoRoot, '.data', 'chaos', new Date().toISOString().replace(/[:.]/g, '-'));
  const startedAt = new Date();
  log(`chaos: ${profile.name} profile, seed ${options.seed}, ${schedule.length} faults over ${profile.durationS} s`);

  // Bundled once (esbuild, seconds) and run with plain node: under tsx a restart on a busy 2-core machine took 10–20 s, most of a short run.
  const distDir = join(repoRoot, '.data', 'chaos-dist', String(process.pid));
  const building = buildBundles(distDir).then(
    () => undefined,
    (error: unknown) => error,
  );
  const [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
  let system: SystemUnderTest | undefined;
  let sql: postgres.Sql | undefined;
  try {
    const buildError = await building;
    if (buildError) throw buildError;
    system = await startSystemUnderTest(`chaos-${options.seed}`, {
      gateways: options.gateways,
      workers: options.workers,
      platforms,
      services: { adminUrl: pg.adminUrl, redisUrl: redis.url },
      built: true,
      distDir,
      workerEnv: { BUSY_INPUT_MODE: 'queue', ...profile.workerEnv },
      logRoot: 'chaos-logs',
    });
    sql = postgres(system.databaseUrl, { max: 2, onnotice: () => undefined, connect_timeout: 5 });
    const target: ChaosTarget = { system, postgres: pg, redis, sql };
    log(`chaos: system up (logs in .data/chaos-logs), load starts`);
    const played = await playLoadWithFaults({ options, durationS: profile.durationS, schedule, target, outDir: join(outDir, 'load') });
    log('chaos: load done, waiting for the system to go idle');
    // Up to 150 s: a killed worker's BullMQ job stays active until its lock (60 s) runs out and a stalled check (every 30 s) takes it back.
    const quietAfterMs = await waitForQuiet(sql, redis.url, system.redisPrefix, 150_000);
    return writeChaosReport(await judgeRun({ options, profileName: profile.name, startedAt, target, played, quietAfterMs }), outDir);
  } finally {
    await sql?.end({ timeout: 5 }).catch(() => undefined);
    await closeQuietly(system, pg, redis);
    rmSync(distDir, { recursive: true, force: true });
  }
}

/** The named profile with the options' overrides. */
function resolveProfile(options: ChaosOptions): ChaosProfile {
  return {
    ...profiles[options.profile],
    ...(options.durationS ? { durationS: options.durationS } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.kinds ? { kinds: options.kinds } : {}),
  };
}

async function buildBundles(outDir: string): Promise<void> {
  await promisify(execFile)(process.execPath, [join(repoRoot, 'scripts/build.mjs'), '--outdir', outDir], { cwd: repoRoot });
}

interface LoadWithFaults {
  options: ChaosOptions;
  durationS: number;
  schedule: ScheduledFault[];
  target: ChaosTarget;
  outDir: string;
}

type PlayedLoad = Awaited<ReturnType<typeof playLoadWithFaults>>;

async function playLoadWithFaults({ options, durationS, schedule, target, outDir }: LoadWithFaults) {
  const { system } = target;
  const loadTarget: LoadTarget = { simUrl: system.simUrl, inboundSimUrls: system.inboundSimUrls, gatewayUrls: system.gatewayUrls, explicitUpdateIds: true };
  let runs: ConversationRun[] = [];
  const loadStartedAt = Date.now();
  const faults: InjectedFault[] = [];
  const player = (async () => {
    for (const fault of schedule) {
      const wait = loadStartedAt + fault.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      // A run running late (restarts are slow on a busy machine) drops faults rather than outlast the load.
      if (Date.now() - loadStartedAt > durationS * 1000) break;
      const injected = await injectFault(target, fault);
      faults.push(injected);
      options.log?.(`chaos: +${((injected.startedAt - loadStartedAt) / 1000).toFixed(1)} s ${fault.kind} ${fault.target}: ${injected.error ? `ERROR ${injected.error}` : injected.detail}`);
    }
  })();
  // Bad input mixed in (the bad-input issue's generators): unauthenticated and invalid payloads only, so the
  // end checks can still demand that every stored line is one the load test sent.
  const fuzzing = runFuzz({
    target: { baseUrl: system.gatewayUrls[0] as string, telegram: { webhookSecret: benchWebhookSecret }, slack: { signingSecret: benchSlack.signingSecret } },
    seed: options.seed,
    perRoute: Math.round(durationS * 2),
    classes: ['unauthenticated', 'invalid'],
  });
  const load = await runLoadTest(
    createLoadTestOptions({
      transcripts: options.transcripts ?? defaultTranscriptPath,
      platforms,
      concurrency: 9,
      pacing: { kind: 'think', thinkMs: 300 },
      modelLatencyMs: 100,
      burstFraction: 0.3,
      busyMode: 'queue',
      durationS,
      maxTurns: 12,
      // Longer than any recovery: a reply that comes late is late, not lost.
      turnTimeoutMs: 60_000,
      settleMs: 1_000,
      seed: options.seed,
      target: loadTarget,
      outDir,
    }),
    {
      onReplies: (finished) => {
        runs = finished;
      },
    },
  );
  await player;
  return { load, runs, faults, loadStartedAt, fuzz: await fuzzing };
}

interface FinishedRun {
  options: ChaosOptions;
  profileName: ProfileName;
  startedAt: Date;
  target: ChaosTarget;
  played: PlayedLoad;
  quietAfterMs: number;
}

/** Once the system is idle: what every platform recorded, what the store holds, the checks and the figures of the report. */
async function judgeRun({ options, profileName, startedAt, target, played, quietAfterMs }: FinishedRun): Promise<ChaosReport> {
  const { system, sql, redis } = target;
  // Listed again once idle: a reply that came after the load test stopped waiting still counts.
  const replies = await listAllReplies(system, played.runs);
  const store = await checkStore(sql, redis.url, system.redisPrefix, played.runs);
  const replyCounts = countRepliesByPlatform(played.runs, replies, played.faults);
  const checks = judgeChaosRun(replyCounts, store, played.faults, played.fuzz);
  const records = played.runs.flatMap((run) => run.records.filter((r) => r !== undefined));
  const slowest = findSlowestRecoveries(played.runs, replies, played.faults);
  return {
    ok: checks.every((c) => c.ok),
    seed: options.seed,
    profile: profileName,
    system: { gateways: options.gateways, workers: options.workers, platforms },
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    loadStartedAt: played.loadStartedAt,
    faults: played.faults.map((f, i) => ({ ...f, offsetMs: f.startedAt - played.loadStartedAt, slowestRecovery: slowest[i] })),
    faultsByKind: countByKind(played.faults),
    fuzz: summariseFuzz(played.fuzz),
    messages: { sent: records.length, acknowledged: records.filter((r) => r.delivered).length, notAcknowledged: records.filter((r) => !r.delivered).length },
    replies: replyCounts,
    recovery: measureRecovery(played.runs, replies, played.faults),
    checks,
    repliesPerSecond: countRepliesPerSecond(replies, played.loadStartedAt),
    quietAfterMs,
    compressions: store.compressions,
    dumps: await dumpConversations(sql, Object.values(replyCounts).flatMap((r) => r.failedChats)),
    load: { turns: played.load.turns, errors: played.load.errors, endToEndMs: played.load.endToEndMs },
  };
}

async function listAllReplies(system: SystemUnderTest, runs: ConversationRun[]): Promise<RepliesByChat> {
  const drivers = createDrivers({ simUrl: system.simUrl, inboundSimUrls: system.inboundSimUrls, explicitUpdateIds: true }, platforms);
  const replies: RepliesByChat = new Map();
  for (const [platform, driver] of drivers) {
    const chats = runs.filter((run) => run.chat.platform === platform).map((run) => run.chat);
    if (chats.length > 0) replies.set(platform, await driver.listReplies(chats));
  }
  return replies;
}

function summariseFuzz(fuzz: FuzzSummary): ChaosReport['fuzz'] {
  const byStatus: Record<string, number> = {};
  for (const figures of Object.values(fuzz.byRoute)) {
    for (const [status, n] of Object.entries(figures?.byStatus ?? {})) byStatus[status] = (byStatus[status] ?? 0) + n;
  }
  return { sent: fuzz.sent, byStatus, unanswered: fuzz.errors.count };
}

function countByKind(faults: InjectedFault[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of faults) counts[f.fault.kind] = (counts[f.fault.kind] ?? 0) + 1;
  return counts;
}

async function closeQuietly(system: SystemUnderTest | undefined, pg: PostgresServer, redis: RedisServer): Promise<void> {
  // Services may be down if the run failed mid-fault: bring them back so the system can stop cleanly.
  await Promise.allSettled([pg.start(), redis.start()]);
  await system?.close().catch(() => undefined);
  await Promise.allSettled([pg.destroy(), redis.destroy()]);
}
