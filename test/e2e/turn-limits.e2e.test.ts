import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationState, eventStatuses, turnsOf } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { modelRequests, waitForCondition, type ModelRequest } from '../support/turn-helpers.ts';

/**
 * Issue 17, defect 3: `wait` could hold a worker slot for 600 s a call, eight
 * calls a turn, and one user could fill every slot by opening conversations.
 * Real worker processes, the model scripted to call `wait` (docs/guarantees.md
 * "Time and turn limits").
 */

/** apps/worker run-turn.ts `notices.timedOut`. */
const timedOutNotice = 'That took too long and was stopped. Please try again, perhaps with a smaller request.';
const waitCall = (seconds: number) => ({ name: 'wait', arguments: { seconds } });
const toolResults = (request: ModelRequest | undefined) => (request?.body.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
const requestsWith = async (system: TestSystem, text: string) => (await modelRequests(system)).filter((r) => r.body.messages.some((m) => m.role === 'user' && (m.content ?? '').includes(text)));

describe('TURN_TIMEOUT_MS', () => {
  let system: TestSystem;
  const chatId = 7401;

  beforeAll(async () => {
    system = await TestSystem.start({ workerProcesses: true, workerEnv: { TURN_TIMEOUT_MS: '1500' } });
    // 30 s: within the call limit (60) and the turn budget (120), far past the turn's time.
    await system.setModelScript({ rules: [{ match: 'c7401:slow', toolCalls: [waitCall(30)] }] });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('stops a turn that waits past it: one notice, the turn failed with TURN_TIMEOUT, no restart, and the next message is answered', async () => {
    const sentAt = Date.now();
    await system.sendTelegram({ chatId, text: 'c7401:slow please wait' });
    const [notice] = await system.waitForTelegram(chatId, 1, 10_000);
    expect(notice?.text).toBe(timedOutNotice);
    const tookMs = Date.now() - sentAt;
    expect(tookMs).toBeGreaterThanOrEqual(1_400);
    expect(tookMs).toBeLessThan(6_000);

    expect(await turnsOf(system, chatId)).toEqual([expect.objectContaining({ status: 'failed', error: 'TURN_TIMEOUT', cut_off: false })]);
    const state = await conversationState(system, chatId);
    expect({ status: state.status, restarts: state.restart_count }).toEqual({ status: 'active', restarts: 0 });
    // The input the turn took is settled like a failed turn's: consumed, not left to run again.
    expect(await eventStatuses(system, chatId)).toEqual([{ text: 'c7401:slow please wait', status: 'done' }]);
    // The wait's call keeps its answer (cut short), so the transcript stays well formed.
    const tools = await system.sql<{ tool_name: string; content: string }[]>`
      select m.tool_name, m.content from messages m join conversations c on c.current_session_id = m.session_id
      where c.chat_id = ${String(chatId)} and m.role = 'tool'`;
    expect(tools).toEqual([{ tool_name: 'wait', content: expect.stringMatching(/^cancelled: /) }]);

    await system.sendTelegram({ chatId, text: 'c7401:again' });
    const replies = await system.waitForTelegram(chatId, 2, 10_000);
    expect(replies.map((r) => r.text)).toEqual([timedOutNotice, 'echo: c7401:again']);
    expect((await turnsOf(system, chatId)).map((t) => t.status)).toEqual(['failed', 'completed']);
    expect((await conversationState(system, chatId)).restart_count).toBe(0);
  });
});

describe('the wait limits and USER_MAX_RUNNING_TURNS', () => {
  let system: TestSystem;
  const botUserId = 'U0SIMBOT';
  const waitSeconds = 3;
  const hog = ['lim-a1', 'lim-a2', 'lim-a3', 'lim-a4', 'lim-a5'];

  beforeAll(async () => {
    system = await TestSystem.start({
      workerProcesses: true,
      slack: true,
      workerEnv: { TOOL_WAIT_MAX_SECONDS: '5', TURN_WAIT_BUDGET_SECONDS: '3', USER_MAX_RUNNING_TURNS: '2' },
    });
    await system.setModelScript({
      rules: [
        // Over the call limit; within it; more than the budget has left; what is left; past the spent budget.
        { match: 'lim-budget', toolCalls: [waitCall(10), waitCall(2), waitCall(2), waitCall(1), waitCall(0.5)] },
        // Every turn of these waits, also one whose first request was aborted because beginTurn found the user busy.
        ...hog.map((text) => ({ match: text, firstStep: true, toolCalls: [waitCall(waitSeconds)] })),
      ],
    });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('refuses a wait over the call limit and waits past the turn budget with tool errors the model reads', async () => {
    const sentAt = Date.now();
    await system.sendSlack({ channel: 'D500', user: 'U500', text: 'lim-budget' });
    const [reply] = await system.waitForSlack('D500', 1, 15_000);
    expect(reply?.text).toBe('echo: lim-budget');
    // Three seconds of waiting were allowed, no more.
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(3_000);
    expect(Date.now() - sentAt).toBeLessThan(8_000);

    const [, followUp] = await requestsWith(system, 'lim-budget');
    expect(toolResults(followUp)).toEqual([
      'error: invalid arguments: seconds at most 5 seconds per call',
      'waited 2 seconds',
      "error: refused: only 1 of this turn's 3 seconds of waiting are left; wait less or answer without waiting",
      'waited 1 seconds',
      'error: refused: this turn has used all of its 3 seconds of waiting; answer without waiting',
    ]);
    // The model sees the limit in the tool's schema too.
    const wait = (followUp?.body as { tools?: { function: { name: string; parameters: { properties: { seconds: { maximum: number } } } } }[] }).tools?.find(
      (t) => t.function.name === 'wait',
    );
    expect(wait?.function.parameters.properties.seconds.maximum).toBe(5);
  });

  it("runs at most two of one user's turns at once, answers another user meanwhile, and answers every deferred conversation after", async () => {
    // Each top-level mention is a conversation of its own (issue 17's example).
    const mentions = [];
    const sentAt = Date.now();
    for (const text of hog) mentions.push(await system.sendSlack({ channel: 'C600', user: 'U600', text: `<@${botUserId}> ${text}` }));
    const runningOf = async (user: string) =>
      Number((await system.sql<{ n: string }[]>`select count(*) as n from turns where status = 'running' and user_key = ${`slack:T0SIM:${user}`}`)[0]?.n);
    await waitForCondition('two turns of U600 running', async () => (await runningOf('U600')) === 2, 10_000, 20);

    // Another user is not held back by U600's limit.
    const otherSentAt = Date.now();
    await system.sendSlack({ channel: 'D601', user: 'U601', text: 'lim-other hello' });
    const [other] = await system.waitForSlack('D601', 1, 5_000);
    expect(other?.text).toBe('echo: lim-other hello');
    expect(Date.now() - otherSentAt).toBeLessThan(2_000);
    expect(await runningOf('U600')).toBe(2);

    // Every mention answered once, in its own thread, with its own text: nothing lost.
    const replies = await system.waitForSlack('C600', hog.length, 30_000);
    expect(replies.map((r) => r.thread_ts).sort()).toEqual(mentions.map((m) => m.ts).sort());
    for (const [i, mention] of mentions.entries()) {
      expect(replies.find((r) => r.thread_ts === mention.ts)?.text).toBe(`echo: &lt;@${botUserId}&gt; ${hog[i]}`);
    }

    // Five turns of three seconds, two at a time: three rounds.
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(3 * waitSeconds * 1000);
    const waits = await system.sql<{ content: string }[]>`
      select m.content from messages m join sessions s on s.id = m.session_id join conversations c on c.id = s.conversation_id
      where c.chat_id = 'C600' and m.role = 'tool'`;
    expect(waits.map((w) => w.content)).toEqual(hog.map(() => `waited ${waitSeconds} seconds`));

    const turns = await system.sql<{ conversation_id: string; status: string; started_at: Date; ended_at: Date }[]>`
      select t.conversation_id, t.status, t.started_at, t.ended_at from turns t join conversations c on c.id = t.conversation_id
      where c.chat_id = 'C600' order by t.id`;
    // One turn per conversation: a deferral writes no row and consumes nothing.
    expect(turns.map((t) => t.status)).toEqual(hog.map(() => 'completed'));
    expect(new Set(turns.map((t) => t.conversation_id)).size).toBe(hog.length);
    // From the database's own clock: never more than two of them overlapped, and two did.
    const edges = turns.flatMap((t) => [
      { at: t.started_at.getTime(), d: 1 },
      { at: t.ended_at.getTime(), d: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.d - b.d);
    let now = 0;
    let most = 0;
    for (const edge of edges) most = Math.max(most, (now += edge.d));
    expect(most).toBe(2);
    const [pending] = await system.sql<{ n: string }[]>`select count(*) as n from inbound_events where status = 'pending'`;
    expect(Number(pending?.n)).toBe(0);
  });
});
