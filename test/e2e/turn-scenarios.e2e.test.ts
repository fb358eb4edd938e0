import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '@switchboard/harness';
import type { RedisClient } from '@switchboard/queue';
import { adminTokenEnv } from '../support/admin-client.ts';
import { bundleFakeCodex, codexSetup, type CodexSetup } from '../support/codex-system.ts';
import { smallContextEnv } from '../support/context-sizes.ts';
import { fastRestartEnv } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';
import { checkCodex, codexLogOf, describeCodex, withoutApprovalPosts, type CodexRecord, type UserAnswer } from '../support/turn-codex-invariants.ts';
import { codexShare, scenarioApprovalTimeoutSeconds } from '../support/turn-codex-random.ts';
import { addCodexCoverage, answerQuestion, loadApprovals, switchToCodex, waitForQuestionsTidied } from '../support/turn-codex-record.ts';
import { addCoverage, describeCoverage, describeFaults, dropLease, emptyCoverage, generateFaults, injectFaults, stallsWorker, type FaultCoverage, type ProcessFault } from '../support/turn-faults.ts';
import { chatPrefix, loadChat, modelRequests, requestsOfChat, sendText, sentTo, waitForIdle, type ModelRequest } from '../support/turn-helpers.ts';
import { checkAll, describeChat, describeTolerated, noneTolerated, type Tolerated } from '../support/turn-invariants.ts';
import { describeScript, generateScript, losesLease, modelRules, Random, seedFromEnv, summariserRequests, type ConversationScript } from '../support/turn-random.ts';
import { addScheduleActions, checkSchedules, makeScenarioSchedule, scheduleShare, waitForSchedules } from '../support/turn-schedules.ts';
import { addHookActions, callScenarioHook, checkHooks, hookShare, prepareHooks } from '../support/turn-hooks.ts';
import { addMcpActions, checkMcp, mcpRules, mcpShare, writeScenarioMcpServers } from '../support/turn-mcp.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-env.ts';

/**
 * Randomized, seeded interleavings of messages, tool calls, slow streams and
 * /stop under every busy mode, on two worker processes, with streaming on and
 * faults: preflight compression (a 1,900-token context and long messages,
 * sometimes a slow summariser), worker processes stopped with SIGTERM or
 * killed with SIGKILL mid-turn and replaced, or stalled with SIGSTOP past
 * WORKER_DEAD_AFTER_MS and resumed, a conversation's lease key deleted during
 * a `wait` turn, a streamed answer or a slow summary (a Redis failover), and
 * a small queued-input cap.
 *
 * About one conversation in five runs on the Codex runtime (the fake
 * app-server of apps/sim as the workers' child; turn-codex-random.ts): it is
 * switched with the admin API before its first message, and its script mixes
 * plain messages, slow streamed answers, /stop and `run:` commands whose
 * question the user approves, refuses or leaves to time out
 * (APPROVAL_TIMEOUT_SECONDS=3 here), in every busy mode, under the same
 * faults. It gets every check but those about OpenAI model requests, and its
 * own (turn-codex-invariants.ts): each message reached Codex and none again
 * after its turn committed, each answer reached Codex as given and nothing
 * ran unapproved, each reply says what became of its command, and the
 * questions shown were closed (a message whose turn was stopped before Codex
 * got it counts once the next turn carried it, docs/codex.md "Threads").
 *
 * About one openai conversation in five also makes a one-off schedule
 * through the admin API mid-script, due 0.5–4 s later, under the same faults
 * (turn-schedules.ts): its occurrence must run exactly once, as one stored
 * input answered like any message (check (s) and the rest).
 *
 * About one in seven also gets a signed `POST /hooks/{name}` (its
 * conversation named in HOOKS_FILE, made before the system starts),
 * sometimes delivered twice under one delivery id (turn-hooks.ts, check
 * (t)): stored once, answered once.
 *
 * Every worker runs a one-tool MCP server over stdio, and about one in
 * seven sends a message the model answers by calling it (turn-mcp.ts, check
 * (u)).
 *
 * Switches: TURN_MCP=off (no MCP server, no MCP calls); TURN_HOOKS=off (no hook calls); TURN_SCHEDULES=off (no schedules: a seed's other actions are the same either way); TURN_STREAMING=off (no streaming, no check (n) in effect);
 * TURN_LEASE_WINDOWS=wait (lease loss only during `wait` turns; the default
 * adds slow summaries and streamed answers, =no-stream leaves the streamed
 * answers out); TURN_STALLS=off (no SIGSTOP faults); TURN_CODEX=off (no Codex
 * conversations: a seed replays its scripts of before); TURN_REDIS=cluster
 * (the gateway and the workers on a three-master Redis Cluster of their own,
 * REDIS_CLUSTER_NODES; a lost lease is deleted on the cluster). The scripts and fault plans are
 * reproducible from the seed (SEED=<n> replays them); TURN_SEEDS=<k> plays
 * seeds SEED … SEED+k-1 one after another on the same processes (each seed
 * its own chats), for a long run without a start-up per seed; the timing of the
 * system under test is not, which is the point: whatever the interleaving,
 * the invariants (turn-invariants.ts, turn-fault-invariants.ts,
 * turn-codex-invariants.ts) must hold for every conversation once it is idle
 * and has had a last, quiet message.
 */

const firstSeed = seedFromEnv();
const seedCount = Number(process.env.TURN_SEEDS ?? 1);
const conversationCount = Number(process.env.TURN_SCENARIOS ?? 200);
const batchSize = 40;
const firstChatId = 30_000;
/** Small, so input that piles up behind a killed worker's lease (up to its TTL) meets the cap. */
const maxQueuedInput = 6;
const streaming = process.env.TURN_STREAMING !== 'off';
const onCluster = process.env.TURN_REDIS === 'cluster';

/** One seed's scripts in batches, with each batch's process faults; the k-th seed's chats follow the (k-1)-th's. */
interface SeedRun {
  seed: number;
  scripts: ConversationScript[];
  batches: ConversationScript[][];
  faultPlans: ProcessFault[][];
}

function planSeed(seed: number, k: number): SeedRun {
  const random = new Random(seed);
  const scripts = Array.from({ length: conversationCount }, (_, i) => generateScript(random, i, firstChatId + k * conversationCount + i));
  addScheduleActions(seed, scripts);
  addHookActions(seed, scripts);
  addMcpActions(seed, scripts);
  const batches: ConversationScript[][] = [];
  for (let i = 0; i < scripts.length; i += batchSize) batches.push(scripts.slice(i, i + batchSize));
  return { seed, scripts, batches, faultPlans: batches.map(() => generateFaults(random)) };
}

if (!Number.isInteger(seedCount) || seedCount < 1) throw new Error(`TURN_SEEDS must be a positive integer: got ${process.env.TURN_SEEDS}`);
const runs: SeedRun[] = Array.from({ length: seedCount }, (_, k) => planSeed((firstSeed + k) >>> 0, k));
const seedLabel = seedCount === 1 ? `SEED=${firstSeed}` : `SEED=${firstSeed}, TURN_SEEDS=${seedCount}`;

const workerEnv: Record<string, string> = {
  ...fastRestartEnv,
  // A little more than fastRestartEnv's 1.5 s: starting a replacement worker loads both cores, and a live worker must not be declared dead.
  HEARTBEAT_INTERVAL_MS: '250',
  WORKER_DEAD_AFTER_MS: '2500',
  ...smallContextEnv,
  COMPRESSION_BACKOFF_MS: '0',
  MAX_QUEUED_INPUT: String(maxQueuedInput),
  // A killed worker's conversations wait out its leases: 5 s instead of 30 keeps a SIGKILL batch short.
  // Still far above any event-loop stall here, so no lease is lost that the script did not delete.
  CONVERSATION_LEASE_TTL_MS: '5000',
  // Slow answers stream (docs/turns.md "Streaming replies"), so check (n) and a lost lease meet a growing message.
  // TURN_STREAMING=off runs the scenarios as before streaming existed (each reply one message).
  ...(streaming ? { STREAMING: 'on', STREAM_AFTER_MS: '300' } : { STREAMING: 'off' }),
  // The Codex conversations (the default runtime stays openai): a question left alone times out within the batch;
  // room for every Codex conversation of a batch on one worker (a full pool fails a turn); a batch's idle children closed during the next.
  APPROVAL_TIMEOUT_SECONDS: String(scenarioApprovalTimeoutSeconds),
  CODEX_MAX_CHILDREN: '16',
  CODEX_IDLE_MS: '30000',
};

/** What the checks of one batch share: the model's requests, the faults, the idle restart counts, what tolerances let pass, the coverage. */
interface BatchContext {
  requests: ModelRequest[];
  faults: ProcessFault[];
  idleCounts: Map<number, { restartCount: number; at: Date }>;
  tolerated: Tolerated;
  coverage: FaultCoverage;
  /** The fake Codex's log as the batch ended, read once per batch (it grows with every seed). */
  codexLog: ReturnType<CodexSetup['readLog']>;
}

/** What a conversation's player saw go wrong, and the questions its user answered. */
interface Played {
  problems: string[];
  answers: UserAnswer[];
}

describe(`randomized turn scenarios (${seedLabel})`, () => {
  let system: TestSystem;
  let redis: RedisClient;
  let codex: CodexSetup;
  let cluster: RedisCluster | undefined;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    const codexCount = runs[0]?.scripts.filter((s) => s.runtime === 'codex').length ?? 0;
    const scheduleCount = runs[0]?.scripts.filter((s) => s.actions.some((a) => a.kind === 'schedule')).length ?? 0;
    const hookCount = runs[0]?.scripts.filter((s) => s.actions.some((a) => a.kind === 'hook')).length ?? 0;
    const mcpCount = runs[0]?.scripts.filter((s) => s.actions.some((a) => a.kind === 'mcp')).length ?? 0;
    console.log(
      `[turn-scenarios] ${seedLabel}: ${conversationCount} conversations per seed (${codexCount} on Codex, ${scheduleCount} with a schedule, ${hookCount} with a hook call, ${mcpCount} with an MCP call in the first${codexShare() === 0 ? ', TURN_CODEX=off' : ''}${scheduleShare === 0 ? ', TURN_SCHEDULES=off' : ''}${hookShare === 0 ? ', TURN_HOOKS=off' : ''}${mcpShare === 0 ? ', TURN_MCP=off' : ''}) in batches of up to ${batchSize}, streaming ${streaming ? 'on' : 'off'}`,
    );
    codex = codexSetup();
    // Dozens of Codex children start per batch on two cores: as one bundled file, each starts on a quarter of the CPU.
    const CODEX_COMMAND = await bundleFakeCodex(codex.dir);
    cluster = onCluster ? await startRedisCluster() : undefined;
    const reach: Record<string, string> = cluster ? { REDIS_CLUSTER_NODES: cluster.nodesSetting } : {};
    // The hooks' conversations exist before the gateway reads HOOKS_FILE (turn-hooks.ts).
    database = await createTestDatabase();
    const hooksFile = await prepareHooks(database.url, runs.flatMap((run) => run.scripts));
    const mcpServers = writeScenarioMcpServers();
    system = await TestSystem.start({
      databaseUrl: database.url,
      workers: 2,
      workerProcesses: true,
      workerEnv: { ...codex.codexEnv, CODEX_COMMAND, ...workerEnv, ...(mcpServers ? { MCP_SERVERS: mcpServers } : {}), ...reach },
      gatewayEnv: { MAX_QUEUED_INPUT: String(maxQueuedInput), ADMIN_TOKEN: adminTokenEnv, ...(hooksFile ? { HOOKS_FILE: hooksFile } : {}), ...reach },
    });
    redis = cluster ? new Cluster(cluster.nodes.slice(0, 1).map((n) => ({ host: '127.0.0.1', port: n.port }))) : new Redis(redisUrl());
  }, 90_000);
  afterAll(async () => {
    redis?.disconnect();
    await system?.close();
    await database?.drop();
    await cluster?.destroy();
    codex?.cleanup();
  });

  /** Sends one message as the chat's user; input over the cap may be refused (check (m) decides whether rightly). */
  async function send(chatId: number, text: string, problems: string[]): Promise<void> {
    const { status, outcome } = await sendText(system, chatId, text);
    if (status !== 200 || (outcome !== 'accepted' && !(outcome === 'refused' && !text.startsWith('/')))) {
      problems.push(`sending ${JSON.stringify(text.slice(0, 60))} answered ${status} ${outcome}`);
    }
  }

  /**
   * Plays one conversation's script as its user would: each action after its
   * gap, one at a time. A Codex conversation first sends `/busy` (its mode, or
   * none to keep the default), so its row exists, and is switched to Codex
   * before its first message; after a `run:` message its user looks out for
   * the question and answers it, or leaves it.
   */
  async function play(script: ConversationScript): Promise<Played> {
    const played: Played = { problems: [], answers: [] };
    const say = (text: string) => send(script.chatId, text, played.problems);
    if (script.runtime === 'codex') {
      await say(script.mode === 'default' ? '/busy' : `/busy ${script.mode}`);
      await switchToCodex(system, script.chatId);
    } else if (script.mode !== 'default') await say(`/busy ${script.mode}`);
    for (const action of script.actions) {
      // The random gap between two user actions is the interleaving under test, not a synchronisation.
      if (action.gapMs > 0) await sleep(action.gapMs);
      if (action.kind === 'lease') await dropLease(system, redis, script.chatId);
      else if (action.kind === 'schedule' || action.kind === 'hook') {
        const problem = action.kind === 'schedule' ? await makeScenarioSchedule(system, script.chatId, action) : await callScenarioHook(system, script.chatId, action);
        if (problem) played.problems.push(problem);
      } else await say(action.text);
      const answer = action.kind === 'run' ? await answerQuestion(system, script.chatId, action, say) : undefined;
      if (answer) played.answers.push(answer);
    }
    return played;
  }

  async function readRestartCounts(chatIds: number[]): Promise<Map<number, { restartCount: number; at: Date }>> {
    const rows = await system.sql<{ chat_id: string; restart_count: number; at: Date }[]>`
      select chat_id, restart_count, clock_timestamp() as at from conversations where chat_id in ${system.sql(chatIds.map(String))}`;
    return new Map(rows.map((r) => [Number(r.chat_id), { restartCount: r.restart_count, at: r.at }]));
  }

  /** Every check for one idle conversation; its violations, each with the script and a dump of the chat. */
  async function checkConversation(script: ConversationScript, played: Played, batch: BatchContext): Promise<string | undefined> {
    const { requests, faults, tolerated, coverage } = batch;
    const [loaded, shown] = await Promise.all([loadChat(system, script.chatId), sentTo(system, script.chatId)]);
    // The summariser's requests tell check (a) what each summary was written from.
    const snapshot = { ...loaded, idleRestartCount: batch.idleCounts.get(script.chatId), summaries: summariserRequests(requests, script.chatId) };
    const chatRequests = requestsOfChat(requests, script.chatId);
    addCoverage(coverage, snapshot, chatRequests, snapshot.summaries);
    const kills = faults.some((f) => f.signal === 'SIGKILL');
    const injectedHere = { restarts: faults.length > 0, kills, leaseLoss: losesLease(script) || stallsWorker(faults), stalls: stallsWorker(faults), maxQueuedInput };
    let record: CodexRecord | undefined;
    if (snapshot.runtime === 'codex') {
      record = { approvals: await loadApprovals(system, script.chatId), ...codexLogOf(batch.codexLog, snapshot.conversationId), answers: played.answers };
      addCodexCoverage(coverage, record);
    }
    // A Codex conversation's questions are posted by the waiting turn, not through the outbox: its own check compares them.
    const sent = record ? withoutApprovalPosts(shown, record) : shown;
    const problems = [
      ...played.problems,
      ...(await checkSchedules(system, script)),
      ...(await checkHooks(system, script)),
      ...(await checkMcp(system, script)),
      ...checkAll(snapshot, chatRequests, sent, injectedHere, tolerated),
      ...(record ? checkCodex(snapshot, record, shown, { kills: kills || stallsWorker(faults) }) : []),
    ];
    if (problems.length === 0) return undefined;
    return `${describeScript(script)}\n    ${problems.join('\n    ')}\n${describeChat(snapshot, chatRequests)}${record ? `\n${describeCodex(record)}` : ''}`;
  }

  for (const { seed, scripts, batches, faultPlans } of runs) for (const [b, batch] of batches.entries()) {
    const first = batch[0]!.index;
    const last = batch.at(-1)!.index;
    const faults = faultPlans[b] ?? [];
    const name = `${seedCount === 1 ? '' : `SEED=${seed} `}batch ${b + 1}/${batches.length}: conversations ${first}–${last}, ${describeFaults(faults)}`;
    it(name, { timeout: 180_000 }, async () => {
      // Each seed's model rules, set as its first batch starts (the seed before is idle by then).
      if (b === 0) await system.setModelScript({ rules: [...mcpRules(scripts), ...modelRules(scripts)] });
      const chatIds = batch.map((s) => s.chatId);
      const [played, injected] = await Promise.all([Promise.all(batch.map(play)), injectFaults(system, faults, chatIds)]);
      if (injected.length > 0) console.log(`[turn-scenarios] SEED=${seed} batch ${b + 1}: ${injected.join('; ')}`);
      // Each schedule's occurrence first (one on a killed worker waits out its job's lock), then the input it stored.
      await waitForSchedules(system, chatIds, 60_000);
      // Input behind a killed worker's lease waits out the lease's TTL before the sweep wakes it.
      await waitForIdle(system, chatIds, 60_000);
      // The restart counters now, before the closing message's reply clears them (check (l) counts them).
      const idleCounts = await readRestartCounts(chatIds);
      // A last message once all is quiet: its completed reply must clear any restart count (check (l)).
      await Promise.all(batch.map((s, i) => send(s.chatId, `${chatPrefix(s.chatId)}fin all done`, played[i]?.problems ?? [])));
      await waitForIdle(system, chatIds, 30_000);
      // A question whose asking turn died is edited by the next recovery sweep; its check (codex questions) reads the chat after it.
      await waitForQuestionsTidied(system, chatIds);

      const context: BatchContext = { requests: await modelRequests(system), faults, idleCounts, tolerated: noneTolerated(), coverage: emptyCoverage(), codexLog: codex.readLog() };
      const failures: string[] = [];
      for (const [i, script] of batch.entries()) {
        const failure = await checkConversation(script, played[i] ?? { problems: [], answers: [] }, context);
        if (failure) failures.push(failure);
      }
      console.log(`[turn-scenarios] SEED=${seed} batch ${b + 1}: ${describeCoverage(context.coverage)}`);
      const counts = describeTolerated(context.tolerated);
      if (counts) console.warn(`[turn-scenarios] SEED=${seed} batch ${b + 1}: tolerated (docs/turns.md "The randomized scenario test"): ${counts}`);
      // A stalled worker that exits other than as declared dead (code 75) is a failure of its own (docs/restarts.md "Declared dead").
      for (const line of injected.filter((l) => l.includes('UNEXPECTED EXIT'))) failures.push(line);
      const where = `SEED=${seed} batch ${b + 1} (${injected.join('; ') || 'no process faults'})`;
      expect(failures, `${where}: ${failures.length} of ${batch.length} conversations broke an invariant:\n${failures.join('\n')}`).toEqual([]);
    });
  }
});
