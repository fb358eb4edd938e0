import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '@switchboard/harness';
import { startSystemUnderTest, type SystemUnderTest } from './bench/system-under-test.ts';
import { createRandom, createSendGate, runConversation, type ConversationRun, type RunContext } from './conversation-runner.ts';
import type { BotReply, ChatHandle, PlatformDriver, PlatformName } from './drivers/platform-driver.ts';
import { unsupportedPlatformReason } from './drivers/platform-driver.ts';
import { checkPlatformWiring, createDrivers } from './drivers/create-drivers.ts';
import { readJson } from './http-json.ts';
import type { LoadTarget, LoadTestOptions } from './options.ts';
import { createProgressView } from './progress.ts';
import { checkConversationReplies, createReplyCounts, type ReplyTally } from './reply-checker.ts';
import { renderReportHtml } from './report-html.ts';
import { buildReport, type LoadTestReport } from './report.ts';
import { buildReplyLookup, loadTranscripts, type ScriptedConversation } from './transcripts.ts';

export interface RunHooks {
  /** Progress lines (system start-up, phases); default: none. */
  log?: (line: string) => void;
  /** Stops sending; what was sent is still awaited (up to the turn timeout) and checked. */
  signal?: AbortSignal;
  /** Called once the system is up, before any line is sent (the bench samples memory from here). */
  onStarted?: (system: { target: LoadTarget; spawned?: SystemUnderTest }) => void;
  /** Called with every conversation's records and what each platform recorded, before the report is built (the chaos run measures recovery from them). */
  onReplies?: (runs: ConversationRun[], repliesByChat: Map<string, Map<string, BotReply[]>>) => void;
}

interface ModelRequestRecord {
  body?: { messages?: { role?: string; content?: unknown }[] };
  receivedAt: number;
  finishedAt?: number;
}

/**
 * Replays transcripts against a system (spawned here or already running),
 * checks every reply and writes report.json and report.html. Never throws for
 * a failed check: `report.ok` says whether every owed reply came once and in order.
 */
export async function runLoadTest(options: LoadTestOptions, hooks: RunHooks = {}): Promise<LoadTestReport> {
  const log = hooks.log ?? (() => undefined);
  for (const platform of options.platforms) {
    const reason = unsupportedPlatformReason(platform);
    if (reason) throw new Error(reason);
  }
  if (!options.spawn === !options.target) throw new Error('runLoadTest needs exactly one of spawn or target');
  const bounded = options.conversations ?? (options.durationS === undefined ? 50 : undefined);
  const scripts = loadTranscripts(options.transcripts, bounded);
  log(`loadtest: ${scripts.length} transcript conversation(s) from ${options.transcripts}`);

  let spawned: SystemUnderTest | undefined;
  let target: LoadTarget;
  if (options.spawn) {
    log(`loadtest: starting Postgres/Redis, ${options.spawn.gateways} gateway(s), ${options.spawn.workers} worker(s) and the simulator`);
    spawned = await startSystemUnderTest('loadtest', {
      gateways: options.spawn.gateways,
      workers: options.spawn.workers,
      platforms: options.platforms,
      workerEnv: { BUSY_INPUT_MODE: options.busyMode, ...options.spawn.workerEnv },
      ...(options.spawn.gatewayEnv ? { gatewayEnv: options.spawn.gatewayEnv } : {}),
      logRoot: 'loadtest-logs',
    });
    target = { simUrl: spawned.simUrl, inboundSimUrls: spawned.inboundSimUrls, gatewayUrls: spawned.gatewayUrls, explicitUpdateIds: true };
  } else {
    target = options.target as LoadTarget;
  }
  try {
    await checkTarget(target);
    await checkPlatformWiring(target, options.platforms);
    hooks.onStarted?.({ target, ...(spawned ? { spawned } : {}) });
    return await replay({ options, target, scripts, bounded, hooks, ownSimulator: spawned !== undefined, log });
  } finally {
    if (spawned) {
      log('loadtest: stopping the spawned system');
      await spawned.close();
    }
  }
}

async function checkTarget(target: LoadTarget): Promise<void> {
  await readJson(`${target.simUrl}/control/health`).catch((error: unknown) => {
    throw new Error(`the simulator at ${target.simUrl} does not answer: ${error instanceof Error ? error.message : String(error)}`);
  });
  for (const gatewayUrl of target.gatewayUrls ?? []) {
    await readJson(`${gatewayUrl}/readyz`).catch((error: unknown) => {
      throw new Error(`the gateway at ${gatewayUrl} is not ready: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
}

/** One replay, as runLoadTest settled it before the first line is sent. */
interface ReplayPlan {
  options: LoadTestOptions;
  target: LoadTarget;
  scripts: ScriptedConversation[];
  /** Conversations to play; undefined: as many as fit in the duration. */
  bounded: number | undefined;
  hooks: RunHooks;
  /** The simulator was started here, so the model timings in its log are this run's alone. */
  ownSimulator: boolean;
  log: (line: string) => void;
}

type Drivers = ReturnType<typeof createDrivers>;
type ErrorCounts = LoadTestReport['errors'];

async function replay(plan: ReplayPlan): Promise<LoadTestReport> {
  const { options, target } = plan;
  const measureOverhead = options.measureOverhead ?? plan.ownSimulator;
  await readJson(`${target.simUrl}/control/model/script`, {
    method: 'POST',
    body: { default: { type: 'lookup', replies: buildReplyLookup(plan.scripts, options.maxTurns) }, delayMs: options.modelLatencyMs },
  });
  if (measureOverhead) await readJson(`${target.simUrl}/control/model/requests`, { method: 'DELETE' });

  const drivers = createDrivers(target, options.platforms);
  const played = await playConversations(plan, drivers);
  // A duplicate could still be on its way; give it a moment to show up before the final count.
  if (options.settleMs > 0) await sleep(options.settleMs);
  const { counts, problems } = await checkReplies(plan, drivers, played.runs);
  const modelMsByLine = measureOverhead ? await readModelTimes(target.simUrl) : undefined;

  const report = buildReport({
    options,
    system: {
      mode: options.spawn ? 'spawn' : 'target',
      simUrl: target.simUrl,
      gateways: options.spawn?.gateways ?? Math.max(1, target.gatewayUrls?.length ?? (target.inboundSimUrls ?? [target.simUrl]).length),
      ...(options.spawn ? { workers: options.spawn.workers } : {}),
      busyMode: options.busyMode,
    },
    startedAt: played.startedAt,
    finishedAt: new Date(),
    runs: played.runs,
    finished: played.finished,
    replies: counts,
    problems,
    errors: played.errors,
    ...(modelMsByLine ? { modelMsByLine } : {}),
  });
  return writeReportFiles(report, options.outDir);
}

function turnCountOf({ scripts, options }: ReplayPlan, instance: number): number {
  const script = scripts[instance % scripts.length];
  return Math.min(script?.turns.length ?? 0, options.maxTurns ?? Number.POSITIVE_INFINITY);
}

/** Sends every conversation's lines until done, the deadline or the caller's signal; what each line got is in the runs' records. */
async function playConversations(plan: ReplayPlan, drivers: Drivers): Promise<{ runs: ConversationRun[]; finished: number; errors: ErrorCounts; startedAt: Date }> {
  const { options, bounded, hooks } = plan;
  const plannedTurns = bounded === undefined ? undefined : Array.from({ length: bounded }, (_, i) => turnCountOf(plan, i)).reduce((a, b) => a + b, 0);
  plan.log(`loadtest: replaying ${bounded ?? 'as many conversations as fit in the duration'} conversation(s), concurrency ${options.concurrency}`);
  const progress = createProgressView(options.progress, plannedTurns);
  const errors: ErrorCounts = { total: 0, byKind: {}, samples: [] };
  const stop = new AbortController();
  // Sending stops at the deadline or on the caller's signal; awaiting replies stops only on the caller's signal.
  const waits = hooks.signal ?? new AbortController().signal;
  hooks.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const startedAt = new Date();
  const deadline = options.durationS === undefined ? Number.POSITIVE_INFINITY : startedAt.getTime() + options.durationS * 1000;

  const ctx: RunContext = {
    driver: (chat: ChatHandle) => drivers.get(chat.platform) as PlatformDriver,
    pacing: options.pacing,
    burstFraction: options.burstFraction,
    modelLatencyMs: options.modelLatencyMs,
    turnTimeoutMs: options.turnTimeoutMs,
    random: createRandom(options.seed),
    stopped: () => stop.signal.aborted || Date.now() >= deadline,
    takeSendSlot: createSendGate(options.pacing),
    onReply: () => progress.turnDone(),
    onError: (kind, detail) => {
      errors.total += 1;
      errors.byKind[kind] = (errors.byKind[kind] ?? 0) + 1;
      if (errors.samples.length < 20) errors.samples.push(detail);
      progress.error();
    },
    signal: waits,
  };
  try {
    return { ...(await runLanes(plan, drivers, ctx)), errors, startedAt };
  } finally {
    progress.stop();
  }
}

/** `concurrency` lanes, each playing one conversation after another, taking the next instance in turn. */
async function runLanes(plan: ReplayPlan, drivers: Drivers, ctx: RunContext): Promise<{ runs: ConversationRun[]; finished: number }> {
  const { options, scripts, bounded, target } = plan;
  const inboundSimUrls = target.inboundSimUrls ?? [target.simUrl];
  const runs: ConversationRun[] = [];
  let nextInstance = 0;
  let finished = 0;
  const lane = async () => {
    while (!ctx.stopped() && (bounded === undefined || nextInstance < bounded)) {
      const instance = nextInstance++;
      const platform = options.platforms[instance % options.platforms.length] as PlatformName;
      const driver = drivers.get(platform) as PlatformDriver;
      const run: ConversationRun = {
        instance,
        script: scripts[instance % scripts.length] as ConversationRun['script'],
        chat: driver.openChat(instance, instance % inboundSimUrls.length),
        turnCount: turnCountOf(plan, instance),
        records: [],
        timeouts: 0,
      };
      runs.push(run);
      await runConversation(ctx, run);
      if (run.records.length === run.turnCount) finished += 1;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  return { runs, finished };
}

/** What each platform recorded in every chat, handed to the caller's hook, then checked against the scripts. */
async function checkReplies({ options, hooks }: ReplayPlan, drivers: Drivers, runs: ConversationRun[]): Promise<ReplyTally> {
  const repliesByChat = new Map<string, Awaited<ReturnType<PlatformDriver['listReplies']>>>();
  for (const [platform, driver] of drivers) {
    const chats = runs.filter((run) => run.chat.platform === platform).map((run) => run.chat);
    if (chats.length > 0) repliesByChat.set(platform, await driver.listReplies(chats));
  }
  hooks.onReplies?.(runs, repliesByChat);
  const tally: ReplyTally = { counts: createReplyCounts(), problems: [] };
  for (const run of runs) {
    checkConversationReplies(run, repliesByChat.get(run.chat.platform)?.get(run.chat.chatId) ?? [], options.busyMode, tally);
  }
  return tally;
}

/** The scripted model's own time per human line (request received → response finished), from the simulator's log. */
async function readModelTimes(simUrl: string): Promise<Map<string, number>> {
  const requests = await readJson<ModelRequestRecord[]>(`${simUrl}/control/model/requests`);
  const times = new Map<string, number>();
  for (const request of requests) {
    const lastUser = request.body?.messages?.filter((m) => m.role === 'user').at(-1)?.content;
    if (typeof lastUser === 'string' && request.finishedAt !== undefined) times.set(lastUser, request.finishedAt - request.receivedAt);
  }
  return times;
}

function writeReportFiles(report: LoadTestReport, outDir: string | undefined): LoadTestReport {
  const dir = resolve(outDir ?? join(repoRoot, '.data', 'loadtest', report.startedAt.replace(/[:.]/g, '-')));
  mkdirSync(dir, { recursive: true });
  const files = { json: join(dir, 'report.json'), html: join(dir, 'report.html') };
  const withFiles = { ...report, files };
  writeFileSync(files.json, `${JSON.stringify(withFiles, null, 2)}\n`);
  writeFileSync(files.html, renderReportHtml(withFiles));
  return withFiles;
}
