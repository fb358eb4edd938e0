import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSystem } from '../support/system.ts';
import { loadChat, modelRequests, requestsOfChat, sendText, sentTo, waitForIdle } from '../support/turn-helpers.ts';
import { checkAll, describeChat } from '../support/turn-invariants.ts';
import { describeScript, generateScript, modelRules, Random, seedFromEnv, type ConversationScript } from '../support/turn-random.ts';

/**
 * Randomized, seeded interleavings of messages, tool calls, slow streams and
 * /stop under every busy mode, on two worker processes. The scripts are
 * reproducible from the seed (SEED=<n> replays them); the timing of the
 * system under test is not, which is the point: whatever the interleaving,
 * the invariants of DESIGN §5–7 must hold for every conversation.
 */

const seed = seedFromEnv();
const conversationCount = Number(process.env.TURN_SCENARIOS ?? 200);
const batchSize = 40;
const firstChatId = 30_000;

const random = new Random(seed);
const scripts: ConversationScript[] = Array.from({ length: conversationCount }, (_, i) => generateScript(random, i, firstChatId + i));
const batches: ConversationScript[][] = [];
for (let i = 0; i < scripts.length; i += batchSize) batches.push(scripts.slice(i, i + batchSize));

describe(`randomized turn scenarios (SEED=${seed})`, () => {
  let system: TestSystem;

  beforeAll(async () => {
    console.log(`[turn-scenarios] SEED=${seed}: ${conversationCount} conversations in ${batches.length} batches of up to ${batchSize}`);
    system = await TestSystem.start({ workers: 2, workerProcesses: true });
    await system.setModelScript({ rules: modelRules(scripts) });
  }, 90_000);
  afterAll(async () => {
    await system?.close();
  });

  /** Plays one conversation's script as its user would: each action after its gap, one at a time. */
  async function play(script: ConversationScript): Promise<string[]> {
    const problems: string[] = [];
    const send = async (text: string) => {
      const { status, outcome } = await sendText(system, script.chatId, text);
      if (status !== 200 || outcome !== 'accepted') problems.push(`sending ${JSON.stringify(text)} answered ${status} ${outcome}`);
    };
    if (script.mode !== 'default') await send(`/busy ${script.mode}`);
    for (const action of script.actions) {
      // The random gap between two user actions is the interleaving under test, not a synchronisation.
      if (action.gapMs > 0) await sleep(action.gapMs);
      await send(action.text);
    }
    return problems;
  }

  for (const [b, batch] of batches.entries()) {
    const first = batch[0]!.index;
    const last = batch.at(-1)!.index;
    it(`batch ${b + 1}/${batches.length}: conversations ${first}–${last}`, { timeout: 90_000 }, async () => {
      const sendProblems = await Promise.all(batch.map(play));
      const chatIds = batch.map((s) => s.chatId);
      await waitForIdle(system, chatIds, 60_000);

      const requests = await modelRequests(system);
      const failures: string[] = [];
      const knownStopRace = { surplusStopped: 0 };
      for (const [i, script] of batch.entries()) {
        const [snapshot, sent] = await Promise.all([loadChat(system, script.chatId), sentTo(system, script.chatId)]);
        const chatRequests = requestsOfChat(requests, script.chatId);
        const problems = [...(sendProblems[i] ?? []), ...checkAll(snapshot, chatRequests, sent, { knownStopRace })];
        if (problems.length > 0) failures.push(`${describeScript(script)}\n    ${problems.join('\n    ')}\n${describeChat(snapshot, chatRequests)}`);
      }
      if (knownStopRace.surplusStopped > 0) {
        console.warn(`[turn-scenarios] SEED=${seed} batch ${b + 1}: ${knownStopRace.surplusStopped} "Stopped." replies for turns that completed (known bug, see busy-modes.e2e.test.ts)`);
      }
      expect(failures, `SEED=${seed}: ${failures.length} of ${batch.length} conversations broke an invariant:\n${failures.join('\n')}`).toEqual([]);
    });
  }
});
