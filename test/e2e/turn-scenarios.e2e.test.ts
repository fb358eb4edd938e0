import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastRestartEnv } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';
import { addCoverage, describeCoverage, describeFaults, dropLease, emptyCoverage, generateFaults, injectFaults, stallsWorker, type ProcessFault } from '../support/turn-faults.ts';
import { chatPrefix, loadChat, modelRequests, requestsOfChat, sendText, sentTo, waitForIdle } from '../support/turn-helpers.ts';
import { checkAll, describeChat, describeTolerated, noneTolerated } from '../support/turn-invariants.ts';
import { describeScript, generateScript, losesLease, modelRules, Random, seedFromEnv, summariserRequests, type ConversationScript } from '../support/turn-random.ts';

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
 * Switches: TURN_STREAMING=off (no streaming, no check (n) in effect);
 * TURN_LEASE_WINDOWS=wait (lease loss only during `wait` turns; the default
 * adds slow summaries and streamed answers, =no-stream leaves the streamed
 * answers out); TURN_STALLS=off (no SIGSTOP faults). The scripts and fault plans are
 * reproducible from the seed (SEED=<n> replays them); the timing of the
 * system under test is not, which is the point: whatever the interleaving,
 * the invariants (turn-invariants.ts, turn-fault-invariants.ts) must hold for
 * every conversation once it is idle and has had a last, quiet message.
 */

const seed = seedFromEnv();
const conversationCount = Number(process.env.TURN_SCENARIOS ?? 200);
const batchSize = 40;
const firstChatId = 30_000;
/** Small, so input that piles up behind a killed worker's lease (up to its TTL) meets the cap. */
const maxQueuedInput = 6;
const streaming = process.env.TURN_STREAMING !== 'off';

const random = new Random(seed);
const scripts: ConversationScript[] = Array.from({ length: conversationCount }, (_, i) => generateScript(random, i, firstChatId + i));
const batches: ConversationScript[][] = [];
for (let i = 0; i < scripts.length; i += batchSize) batches.push(scripts.slice(i, i + batchSize));
const faultPlans: ProcessFault[][] = batches.map(() => generateFaults(random));

const workerEnv: Record<string, string> = {
  ...fastRestartEnv,
  // A little more than fastRestartEnv's 1.5 s: starting a replacement worker loads both cores, and a live worker must not be declared dead.
  HEARTBEAT_INTERVAL_MS: '250',
  WORKER_DEAD_AFTER_MS: '2500',
  MODEL_CONTEXT_TOKENS: '1900',
  COMPRESSION_BACKOFF_MS: '0',
  MAX_QUEUED_INPUT: String(maxQueuedInput),
  // A killed worker's conversations wait out its leases: 5 s instead of 30 keeps a SIGKILL batch short.
  // Still far above any event-loop stall here, so no lease is lost that the script did not delete.
  CONVERSATION_LEASE_TTL_MS: '5000',
  // Slow answers stream (docs/turns.md "Streaming replies"), so check (n) and a lost lease meet a growing message.
  // TURN_STREAMING=off runs the scenarios as before streaming existed (each reply one message).
  ...(streaming ? { STREAMING: 'on', STREAM_AFTER_MS: '300' } : { STREAMING: 'off' }),
};

describe(`randomized turn scenarios (SEED=${seed})`, () => {
  let system: TestSystem;
  let redis: Redis;

  beforeAll(async () => {
    console.log(`[turn-scenarios] SEED=${seed}: ${conversationCount} conversations in ${batches.length} batches of up to ${batchSize}, streaming ${streaming ? 'on' : 'off'}`);
    system = await TestSystem.start({ workers: 2, workerProcesses: true, workerEnv, gatewayEnv: { MAX_QUEUED_INPUT: String(maxQueuedInput) } });
    await system.setModelScript({ rules: modelRules(scripts) });
    redis = new Redis(redisUrl());
  }, 90_000);
  afterAll(async () => {
    redis?.disconnect();
    await system?.close();
  });

  /** Sends one message as the chat's user; input over the cap may be refused (check (m) decides whether rightly). */
  async function send(chatId: number, text: string, problems: string[]): Promise<void> {
    const { status, outcome } = await sendText(system, chatId, text);
    if (status !== 200 || (outcome !== 'accepted' && !(outcome === 'refused' && !text.startsWith('/')))) {
      problems.push(`sending ${JSON.stringify(text.slice(0, 60))} answered ${status} ${outcome}`);
    }
  }

  /** Plays one conversation's script as its user would: each action after its gap, one at a time. */
  async function play(script: ConversationScript): Promise<string[]> {
    const problems: string[] = [];
    if (script.mode !== 'default') await send(script.chatId, `/busy ${script.mode}`, problems);
    for (const action of script.actions) {
      // The random gap between two user actions is the interleaving under test, not a synchronisation.
      if (action.gapMs > 0) await sleep(action.gapMs);
      if (action.kind === 'lease') await dropLease(system, redis, script.chatId);
      else await send(script.chatId, action.text, problems);
    }
    return problems;
  }

  async function readRestartCounts(chatIds: number[]): Promise<Map<number, { restartCount: number; at: Date }>> {
    const rows = await system.sql<{ chat_id: string; restart_count: number; at: Date }[]>`
      select chat_id, restart_count, clock_timestamp() as at from conversations where chat_id in ${system.sql(chatIds.map(String))}`;
    return new Map(rows.map((r) => [Number(r.chat_id), { restartCount: r.restart_count, at: r.at }]));
  }

  for (const [b, batch] of batches.entries()) {
    const first = batch[0]!.index;
    const last = batch.at(-1)!.index;
    const faults = faultPlans[b] ?? [];
    it(`batch ${b + 1}/${batches.length}: conversations ${first}–${last}, ${describeFaults(faults)}`, { timeout: 180_000 }, async () => {
      const chatIds = batch.map((s) => s.chatId);
      const [sendProblems, injected] = await Promise.all([Promise.all(batch.map(play)), injectFaults(system, faults, chatIds)]);
      if (injected.length > 0) console.log(`[turn-scenarios] SEED=${seed} batch ${b + 1}: ${injected.join('; ')}`);
      // Input behind a killed worker's lease waits out the lease's TTL before the sweep wakes it.
      await waitForIdle(system, chatIds, 60_000);
      // The restart counters now, before the closing message's reply clears them (check (l) counts them).
      const idleCounts = await readRestartCounts(chatIds);
      // A last message once all is quiet: its completed reply must clear any restart count (check (l)).
      await Promise.all(batch.map((s, i) => send(s.chatId, `${chatPrefix(s.chatId)}fin all done`, sendProblems[i] ?? [])));
      await waitForIdle(system, chatIds, 30_000);

      const requests = await modelRequests(system);
      const failures: string[] = [];
      const tolerated = noneTolerated();
      const coverage = emptyCoverage();
      for (const [i, script] of batch.entries()) {
        const [loaded, sent] = await Promise.all([loadChat(system, script.chatId), sentTo(system, script.chatId)]);
        // The summariser's requests tell check (a) what each summary was written from.
        const snapshot = { ...loaded, idleRestartCount: idleCounts.get(script.chatId), summaries: summariserRequests(requests, script.chatId) };
        const chatRequests = requestsOfChat(requests, script.chatId);
        addCoverage(coverage, snapshot, chatRequests, snapshot.summaries);
        const injectedHere = { restarts: faults.length > 0, kills: faults.some((f) => f.signal === 'SIGKILL'), leaseLoss: losesLease(script) || stallsWorker(faults), stalls: stallsWorker(faults), maxQueuedInput };
        const problems = [...(sendProblems[i] ?? []), ...checkAll(snapshot, chatRequests, sent, injectedHere, tolerated)];
        if (problems.length > 0) failures.push(`${describeScript(script)}\n    ${problems.join('\n    ')}\n${describeChat(snapshot, chatRequests)}`);
      }
      console.log(`[turn-scenarios] SEED=${seed} batch ${b + 1}: ${describeCoverage(coverage)}`);
      const counts = describeTolerated(tolerated);
      if (counts) console.warn(`[turn-scenarios] SEED=${seed} batch ${b + 1}: tolerated (docs/turns.md "The randomized scenario test"): ${counts}`);
      // A stalled worker that exits other than as declared dead (code 75) is a failure of its own (docs/restarts.md "Declared dead").
      for (const line of injected.filter((l) => l.includes('UNEXPECTED EXIT'))) failures.push(line);
      const context = `SEED=${seed} batch ${b + 1} (${injected.join('; ') || 'no process faults'})`;
      expect(failures, `${context}: ${failures.length} of ${batch.length} conversations broke an invariant:\n${failures.join('\n')}`).toEqual([]);
    });
  }
});
