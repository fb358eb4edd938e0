import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  conversationState,
  eventStatuses,
  fastRestartEnv,
  restartWorker,
  resumeNotes,
  slowRule,
  stopWorker,
  subscribeLifecycleEvents,
  suspendedNoticePrefix,
  turnsOf,
  waitForConversation,
  waitForRunningTurn,
  type ConversationState,
  type StopResult,
} from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { lastUserText, modelRequests, userTexts, waitForCondition, waitForRequestFor, type ModelRequest } from '../support/turn-helpers.ts';

/**
 * Restarts and lifecycle events with real worker processes (docs/restarts.md). Restarting a
 * worker process costs seconds, so the conversations share one timeline of
 * four restarts of the only worker, each conversation playing one case:
 *
 *   chat     before     restart 1   between           restart 2  restart 3          restart 4 (SIGKILL)
 *   loop     -          cut (1)     resumes           cut (2)    cut (3) ─► held,   fresh session, (2)*, cut (3): held again?
 *                                                                suspended on start
 *   reset    -          cut (1)     answered (0)      cut (1)    cut (2)            answered (0), idle
 *   resume   answered   cut (1)     resumed, answered idle       idle               idle
 *   idle     answered   idle        idle              idle       idle               idle
 *   crash    -          -           sent              cut (1)    cut (2)            killed: cut (3) ─► suspended
 *
 * (n) is the conversation's restart counter; * set in SQL to stand for two
 * more restarts of the fresh session. The `it`s run in order and each
 * builds on the state the previous one left; every wait is on a model
 * request, a sent message, a Redis event or a Postgres condition.
 */

const chats = { loop: 7101, reset: 7102, idle: 7103, resume: 7104, crash: 7106 } as const;
const text = {
  loop: 'c7101:loop',
  resetFirst: 'c7102:first',
  resetSecond: 'c7102:second',
  idleHello: 'c7103:hello',
  idleAgain: 'c7103:again',
  resumeWarm: 'c7104:warm up',
  resumeCut: 'c7104:cut once',
  resumeAfter: 'c7104:after',
  crash: 'c7106:crash',
  loopAgain: 'c7101:slow again',
} as const;

describe('restarts with real worker processes', () => {
  let system: TestSystem;
  let lifecycle: Awaited<ReturnType<typeof subscribeLifecycleEvents>>;
  const stops: StopResult[] = [];
  /** The idle conversation's state after every restart. */
  const idleAfterRestart: ConversationState[] = [];
  /** The latest model request id seen per message text: a new running turn must be newer. */
  const lastRequest = new Map<string, number>();
  let idleBefore: { state: ConversationState; transcript: string[] };

  const sendMessage = async (chatId: number, message: string) => {
    const { status } = await system.sendTelegram({ chatId, text: message });
    expect(status).toBe(200);
  };
  /** Waits until a turn for `message` newer than the last one seen is streaming and `running`. */
  const waitRunning = async (chatId: number, message: string) => {
    const { request } = await waitForRunningTurn(system, chatId, message, lastRequest.get(message) ?? 0);
    lastRequest.set(message, request.id);
    return request;
  };
  const restart = async (signal: NodeJS.Signals) => {
    const stopped = await restartWorker(system, signal);
    stops.push(stopped);
    return stopped;
  };
  const transcriptOf = async (chatId: number) =>
    (
      await system.sql<{ line: string }[]>`
        select m.session_id || ':' || m.role || ':' || m.content as line
        from messages m join sessions s on s.id = m.session_id join conversations c on c.id = s.conversation_id
        where c.chat_id = ${String(chatId)} order by m.session_id, m.seq`
    ).map((r) => r.line);
  const requestsFor = async (message: string): Promise<ModelRequest[]> => (await modelRequests(system)).filter((r) => lastUserText(r) === message);

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, workerProcesses: true, workerEnv: fastRestartEnv });
    lifecycle = await subscribeLifecycleEvents(system);
    await system.setModelScript({
      default: { type: 'echo', prefix: 'echo: ' },
      rules: [
        slowRule(`^${text.loop}$`),
        slowRule(`^${text.resetFirst}$`, 1),
        slowRule(`^${text.resetSecond}$`, 2),
        slowRule(`^${text.resumeCut}$`, 1),
        slowRule(`^${text.crash}$`),
        slowRule(`^${text.loopAgain}$`),
      ],
    });
  }, 90_000);
  afterAll(async () => {
    lifecycle?.close();
    await system?.close();
  });

  it('restart 1: SIGTERM drains, cuts off every running turn once, and exits 0', { timeout: 90_000 }, async () => {
    // Two conversations that finished a turn before the restarts: their turn.ended must destroy nothing.
    await sendMessage(chats.idle, text.idleHello);
    await sendMessage(chats.resume, text.resumeWarm);
    await system.waitForTelegram(chats.idle, 1);
    await system.waitForTelegram(chats.resume, 1);
    const idle = await conversationState(system, chats.idle);
    await lifecycle.waitFor('turn.ended of the idle chat', (e) => e.type === 'turn.ended' && e.conversationId === idle.id);
    idleBefore = { state: idle, transcript: await transcriptOf(chats.idle) };

    await sendMessage(chats.loop, text.loop);
    await sendMessage(chats.reset, text.resetFirst);
    await sendMessage(chats.resume, text.resumeCut);
    await Promise.all([waitRunning(chats.loop, text.loop), waitRunning(chats.reset, text.resetFirst), waitRunning(chats.resume, text.resumeCut)]);

    const stopped = await restart('SIGTERM');
    expect(stopped.exitCode).toBe(0);
    // The drain window is 300 ms; a clean stop takes a fraction of the 15 s grace period.
    expect(stopped.stopMs).toBeLessThan(10_000);
    idleAfterRestart.push(await conversationState(system, chats.idle));

    for (const chatId of [chats.loop, chats.reset, chats.resume]) {
      const cut = (await turnsOf(system, chatId)).filter((t) => t.cut_off);
      expect(cut, `chat ${chatId}`).toEqual([expect.objectContaining({ status: 'failed', error: 'cut_off_by_restart', worker_id: expect.stringContaining(`-${stopped.pid}-`) })]);
    }
    // Counted once by the stopping worker. (The other two may already be resumed and answered, which clears the counter.)
    expect((await conversationState(system, chats.loop)).restart_count).toBe(1);
    // Nothing of the cut-off turns was committed: their input is pending for the resume.
    expect((await eventStatuses(system, chats.loop)).map((e) => e.status)).toEqual(['pending']);
  });

  it('a cut-off turn below the threshold is resumed exactly once, with the resume note, and answered', { timeout: 60_000 }, async () => {
    const replies = await system.waitForTelegram(chats.resume, 2);
    expect(replies.map((r) => r.text)).toEqual([`echo: ${text.resumeWarm}`, `echo: ${text.resumeCut}`]);
    await waitForConversation(system, chats.resume, 'the delivered reply to clear the counter', (s) => s.restart_count === 0);

    const requests = await requestsFor(text.resumeCut);
    expect(requests).toHaveLength(2);
    const [cut, resumed] = requests as [ModelRequest, ModelRequest];
    expect(cut.abortedAt).toBeDefined();
    expect(resumeNotes(cut)).toBe(0);
    expect(resumeNotes(resumed)).toBe(1);
    expect(resumed.finishedAt).toBeDefined();
    // The resumed request is the cut-off one again: same history, same new message, once.
    expect(userTexts(resumed)).toEqual([text.resumeWarm, text.resumeCut]);

    // The note is API-only: the transcript holds the user's words once and no note.
    const stored = await transcriptOf(chats.resume);
    expect(stored.map((l) => l.replace(/^\d+:/, ''))).toEqual([`user:${text.resumeWarm}`, `assistant:echo: ${text.resumeWarm}`, `user:${text.resumeCut}`, `assistant:echo: ${text.resumeCut}`]);
    expect((await turnsOf(system, chats.resume)).map((t) => t.status)).toEqual(['completed', 'failed', 'completed']);

    // Resumed once means once: the next turn carries no note.
    await sendMessage(chats.resume, text.resumeAfter);
    const after = await waitForRequestFor(system, text.resumeAfter, 'finished');
    expect(resumeNotes(after)).toBe(0);
    await system.waitForTelegram(chats.resume, 3);
    expect(await requestsFor(text.resumeCut)).toHaveLength(2);
  });

  it('restarts 2 and 3: a conversation cut off by SIGTERM three times in a row is suspended; its next message starts fresh with the notice', { timeout: 120_000 }, async () => {
    // Between restarts 1 and 2: the reset chat's first message is answered (counter back to 0) and two new turns start.
    await system.waitForTelegram(chats.reset, 1);
    await waitForConversation(system, chats.reset, 'the delivered reply to clear the counter', (s) => s.restart_count === 0);
    await sendMessage(chats.reset, text.resetSecond);
    await sendMessage(chats.crash, text.crash);
    await Promise.all([waitRunning(chats.loop, text.loop), waitRunning(chats.reset, text.resetSecond), waitRunning(chats.crash, text.crash)]);
    const second = await restart('SIGTERM');
    expect(second.exitCode).toBe(0);
    idleAfterRestart.push(await conversationState(system, chats.idle));
    expect((await conversationState(system, chats.loop)).restart_count).toBe(2);

    await Promise.all([waitRunning(chats.loop, text.loop), waitRunning(chats.reset, text.resetSecond), waitRunning(chats.crash, text.crash)]);
    const loopSessionId = (await conversationState(system, chats.loop)).current_session_id;
    const third = await restart('SIGTERM');
    expect(third.exitCode).toBe(0);
    idleAfterRestart.push(await conversationState(system, chats.idle));

    // Suspended on the new worker's start (or its first sweep), instead of resumed.
    const loop = await waitForConversation(system, chats.loop, 'suspended', (s) => s.status === 'suspended');
    expect(loop).toMatchObject({ suspend_reason: 'restart_loop', restart_count: 0, current_session_id: null, pre_suspend_session_id: loopSessionId });
    expect((await turnsOf(system, chats.loop)).map((t) => [t.status, t.cut_off])).toEqual([
      ['failed', true],
      ['failed', true],
      ['failed', true],
    ]);
    await lifecycle.waitFor('conversation.suspended', (e) => e.type === 'conversation.suspended' && e.conversationId === loop.id && e.reason === 'restart_loop');
    // The session is parked, not over: an operator's resume brings it back, so no session.finalized (docs/restarts.md, "Lifecycle events").
    await lifecycle.waitFor('session.parked', (e) => e.type === 'session.parked' && e.conversationId === loop.id && e.sessionId === loopSessionId && e.reason === 'restart_loop');
    expect(lifecycle.of(loop.id).filter((e) => e.type === 'session.finalized')).toEqual([]);
    // Its cut-off input is held, not resumed behind the user's back.
    expect(await eventStatuses(system, chats.loop)).toEqual([{ text: text.loop, status: 'held' }]);

    // Each cut-off request after the first carried the resume note once; none was answered.
    const loopRequests = await requestsFor(text.loop);
    expect(loopRequests.map(resumeNotes)).toEqual([0, 1, 1]);
    expect(loopRequests.every((r) => r.abortedAt !== undefined)).toBe(true);

    // The next message starts a fresh session, told in one line; the held input does not run.
    await sendMessage(chats.loop, 'c7101:back');
    const replies = await system.waitForTelegram(chats.loop, 2);
    expect(replies[0]?.text.startsWith(suspendedNoticePrefix)).toBe(true);
    expect(replies[1]?.text).toBe('echo: c7101:back');
    const fresh = await waitForRequestFor(system, 'c7101:back', 'finished');
    expect(userTexts(fresh)).toEqual(['c7101:back']);
    // A fresh session resumes nothing, so it must not tell the model its previous turn was cut off
    // (resumesCutOffTurn: the cut-off turn ran on another session, not this one or its parent).
    expect(resumeNotes(fresh), 'resume note on the first turn of the fresh session after a restart-loop suspension').toBe(0);
    const after = await conversationState(system, chats.loop);
    expect(after.current_session_id).not.toBeNull();
    expect(after.current_session_id).not.toBe(loopSessionId);
    expect(after.pre_suspend_session_id).toBe(loopSessionId);
    expect(await requestsFor(text.loop)).toHaveLength(3);
    expect((await eventStatuses(system, chats.loop)).map((e) => e.status)).toEqual(['held', 'done']);

    // The notice is said once, not on every message of the fresh session.
    await sendMessage(chats.loop, 'c7101:and again');
    const more = await system.waitForTelegram(chats.loop, 3);
    expect(more[2]?.text).toBe('echo: c7101:and again');
  });

  it('the same three restarts with a successful reply in between never suspend', async () => {
    // The reset chat was cut off by all three restarts, but its first reply came between the first and the second.
    await system.waitForTelegram(chats.reset, 2);
    const reset = await waitForConversation(system, chats.reset, 'the delivered reply to clear the counter', (s) => s.restart_count === 0);
    expect(reset.status).toBe('active');
    expect(reset.suspend_reason).toBeNull();
    expect((await turnsOf(system, chats.reset)).filter((t) => t.cut_off)).toHaveLength(3);
    expect((await system.waitForTelegram(chats.reset, 2)).map((r) => r.text)).toEqual([`echo: ${text.resetFirst}`, `echo: ${text.resetSecond}`]);
    expect(lifecycle.of(reset.id).some((e) => e.type === 'conversation.suspended')).toBe(false);
  });

  it('restart 4: SIGKILL counts like SIGTERM, found by the missing heartbeat', { timeout: 90_000 }, async () => {
    expect((await conversationState(system, chats.crash)).restart_count).toBe(2);
    // For the next test: the loop chat, suspended and now in its fresh session, is cut off by this crash
    // too, as if for the third time in the fresh session (its counter is set to 2 here to save two restarts).
    await waitForCondition('the loop chat replies marked sent (which clears its counter)', async () => {
      const [row] = await system.sql<{ n: number }[]>`
        select count(*)::int as n from outbox o join conversations c on c.id = o.conversation_id
        where c.chat_id = ${String(chats.loop)} and o.status <> 'sent'`;
      return row?.n === 0;
    }, 10_000);
    await sendMessage(chats.loop, text.loopAgain);
    await Promise.all([waitRunning(chats.crash, text.crash), waitRunning(chats.loop, text.loopAgain)]);
    await system.sql`update conversations set restart_count = 2 where chat_id = ${String(chats.loop)}`;
    const killed = await stopWorker(system, 'SIGKILL');
    expect(killed.signalCode).toBe('SIGKILL');
    stops.push(killed);
    await system.addWorker(true);
    idleAfterRestart.push(await conversationState(system, chats.idle));

    // Nobody ran close(): the new worker's sweep declares the silent worker dead, cuts its turn off and counts it.
    const crash = await waitForConversation(system, chats.crash, 'suspended', (s) => s.status === 'suspended');
    expect(crash).toMatchObject({ suspend_reason: 'restart_loop', restart_count: 0, current_session_id: null });
    const [worker] = await system.sql<{ status: string }[]>`select status from workers where pid = ${killed.pid}`;
    expect(worker?.status).toBe('dead');
    const cut = (await turnsOf(system, chats.crash)).filter((t) => t.cut_off);
    expect(cut).toHaveLength(3);
    expect(cut[2]?.worker_id).toContain(`-${killed.pid}-`);
    expect(await eventStatuses(system, chats.crash)).toEqual([{ text: text.crash, status: 'held' }]);
  });

  it('a suspended conversation whose fresh session is cut off again up to the threshold is held again, not resumed', async () => {
    // Cut off by the same crash as the crash chat, so the same sweep counted it (its turn is cut off by now).
    const cut = (await turnsOf(system, chats.loop)).filter((t) => t.cut_off);
    expect(cut).toHaveLength(4);
    // Guarded again (suspendRestartLoops, packages/db restart-store.ts): the fresh session is set aside for good,
    // its cut-off input held and the counter cleared; the parked session stays for operators.
    const loop = await waitForConversation(system, chats.loop, 'the fresh session set aside', (s) => s.current_session_id === null && s.restart_count === 0);
    expect(loop.status).toBe('suspended');
    expect(loop.pre_suspend_session_id).not.toBeNull();
    expect((await eventStatuses(system, chats.loop)).at(-1)).toEqual({ text: text.loopAgain, status: 'held' });
    // That session is really over (a resume would finalize it too): session.finalized, reason restart_loop.
    const finalized = await lifecycle.waitFor('session.finalized of the fresh session', (e) => e.type === 'session.finalized' && e.conversationId === loop.id);
    expect(finalized.reason).toBe('restart_loop');
    expect(finalized.sessionId).not.toBe(loop.pre_suspend_session_id);
  });

  it('a conversation idle during all four restarts is never counted, and stays restorable: same session, same transcript', { timeout: 60_000 }, async () => {
    expect(idleAfterRestart).toHaveLength(4);
    for (const state of idleAfterRestart) expect(state).toEqual(idleBefore.state);
    const idle = await conversationState(system, chats.idle);
    expect(idle).toEqual(idleBefore.state);
    expect(await turnsOf(system, chats.idle)).toEqual([expect.objectContaining({ status: 'completed', cut_off: false })]);
    expect(await transcriptOf(chats.idle)).toEqual(idleBefore.transcript);
    const [session] = await system.sql<{ status: string }[]>`select status from sessions where id = ${idle.current_session_id}`;
    expect(session?.status).toBe('active');
    // turn.ended destroyed nothing: no session.finalized for it.
    expect(lifecycle.of(idle.id).map((e) => e.type)).toEqual(['session.started', 'turn.started', 'turn.ended']);

    // A new message continues the same session with the same history.
    await sendMessage(chats.idle, text.idleAgain);
    const request = await waitForRequestFor(system, text.idleAgain, 'finished');
    expect(userTexts(request)).toEqual([text.idleHello, text.idleAgain]);
    expect(request.body.messages.some((m) => m.role === 'assistant' && m.content === `echo: ${text.idleHello}`)).toBe(true);
    expect(resumeNotes(request)).toBe(0);
    expect((await system.waitForTelegram(chats.idle, 2))[1]?.text).toBe(`echo: ${text.idleAgain}`);
    await waitForCondition('the idle chat transcript to grow', async () => (await transcriptOf(chats.idle)).length === 4, 10_000);
    expect((await conversationState(system, chats.idle)).current_session_id).toBe(idle.current_session_id);
  });

  it('/reset emits session.finalized and tears down: a new session, the old one finalized', { timeout: 60_000 }, async () => {
    const before = await conversationState(system, chats.idle);
    await sendMessage(chats.idle, '/reset');
    const finalized = await lifecycle.waitFor('session.finalized', (e) => e.type === 'session.finalized' && e.conversationId === before.id);
    expect(finalized).toMatchObject({ sessionId: before.current_session_id, reason: 'reset' });
    const started = await lifecycle.waitFor('session.started', (e) => e.type === 'session.started' && e.conversationId === before.id && e.sessionId !== before.current_session_id);
    const events = lifecycle.of(before.id);
    expect(events.indexOf(finalized)).toBeLessThan(events.indexOf(started));

    const after = await conversationState(system, chats.idle);
    expect(after.current_session_id).toBe(started.sessionId);
    expect(after.current_session_id).not.toBe(before.current_session_id);
    expect(after.restart_count).toBe(0);
    const [old] = await system.sql<{ status: string; end_reason: string }[]>`select status, end_reason from sessions where id = ${before.current_session_id}`;
    expect(old).toEqual({ status: 'finalized', end_reason: 'reset' });

    await sendMessage(chats.idle, 'c7103:after reset');
    const request = await waitForRequestFor(system, 'c7103:after reset', 'finished');
    expect(userTexts(request)).toEqual(['c7103:after reset']);
  });

  it('every stop was clean: SIGTERM exits 0 well within the grace period; SIGKILL is a kill', () => {
    expect(stops.map((s) => [s.signal, s.exitCode, s.signalCode])).toEqual([
      ['SIGTERM', 0, null],
      ['SIGTERM', 0, null],
      ['SIGTERM', 0, null],
      ['SIGKILL', null, 'SIGKILL'],
    ]);
    for (const s of stops.filter((x) => x.signal === 'SIGTERM')) expect(s.stopMs).toBeLessThan(10_000);
  });
});
