import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexSetup, turnStartsFor, waitForTurnStart, type CodexSetup as Setup } from '../support/codex-system.ts';
import { liveWorkers, resumeNotePrefix, restartWorker, turnsOf } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

// Issue 21: a Telegram conversation answered by the Codex runtime
// (AGENT_RUNTIME=codex) against the fake app-server of apps/sim as a real
// child of a real worker process: threads resumed after a worker restart, a
// child dying mid-turn, interrupts, the turn deadline, and crashes in a row
// suspending the conversation (docs/codex.md). Approvals through a worker: codex-approvals.e2e.test.ts.

const crashedNotice = 'The agent process stopped unexpectedly. Please send your message again.';
const timedOutNotice = 'That took too long and was stopped. Please try again, perhaps with a smaller request.';
const crashLoopNotice = 'Your previous session was paused after the agent process stopped unexpectedly several times in a row';

async function conversationOf(system: TestSystem, chatId: number) {
  const [row] = await system.sql<{ id: string; status: string; suspend_reason: string | null; runtime_crash_streak: number; current_session_id: string | null }[]>`
    select id, status, suspend_reason, runtime_crash_streak, current_session_id from conversations where chat_id = ${String(chatId)}`;
  return row;
}

async function threadOfChat(system: TestSystem, chatId: number): Promise<string | null> {
  const [row] = await system.sql<{ runtime_thread_id: string | null }[]>`
    select s.runtime_thread_id from conversations c join sessions s on s.id = c.current_session_id where c.chat_id = ${String(chatId)}`;
  return row?.runtime_thread_id ?? null;
}

describe('the Codex runtime through a worker process', () => {
  let system: TestSystem;
  let setup: Setup;

  beforeAll(async () => {
    setup = codexSetup();
    system = await TestSystem.start({ workerProcesses: true, workerEnv: setup.workerEnv });
  });
  afterAll(async () => {
    await system?.close();
    setup?.cleanup();
  });

  it('answers a Telegram message, and continues the same thread in a fresh child after the worker restarts', async () => {
    await system.sendTelegram({ chatId: 4101, text: 'hello codex' });
    expect((await system.waitForTelegram(4101, 1)).map((m) => m.text)).toEqual(['codex: hello codex']);
    const threadId = await threadOfChat(system, 4101);
    expect(threadId).toBeTruthy();
    const firstChild = (await waitForTurnStart(setup, 'hello codex')).instance;

    // A graceful restart: the worker closes its children; the next worker's child resumes the thread kept on the session.
    const [worker] = liveWorkers(system);
    await worker?.stop('SIGTERM');
    await system.addWorker(true);
    await system.sendTelegram({ chatId: 4101, text: 'after the restart' });
    expect((await system.waitForTelegram(4101, 2)).map((m) => m.text)).toEqual(['codex: hello codex', 'codex: after the restart']);
    const resumed = setup.readLog().filter((m) => m.received.method === 'thread/resume');
    expect(resumed.map((m) => m.received.params?.threadId)).toContain(threadId);
    expect((await waitForTurnStart(setup, 'after the restart')).instance).not.toBe(firstChild);
    expect(await threadOfChat(system, 4101)).toBe(threadId);
  });

  it('tells the user once when the child dies mid-turn; the worker lives on and a fresh child answers the next message', async () => {
    await system.sendTelegram({ chatId: 4102, text: 'warm up' });
    await system.waitForTelegram(4102, 1);
    const workersBefore = liveWorkers(system).map((w) => w.child.pid);
    await system.sendTelegram({ chatId: 4102, text: 'die' });
    expect((await system.waitForTelegram(4102, 2)).map((m) => m.text)).toEqual(['codex: warm up', crashedNotice]);
    expect((await conversationOf(system, 4102))?.runtime_crash_streak).toBe(1);
    const diedChild = (await waitForTurnStart(setup, 'die')).instance;

    await system.sendTelegram({ chatId: 4102, text: 'still there?' });
    expect((await system.waitForTelegram(4102, 3)).at(-1)?.text).toBe('codex: still there?');
    expect((await waitForTurnStart(setup, 'still there?')).instance).not.toBe(diedChild);
    expect(liveWorkers(system).map((w) => w.child.pid)).toEqual(workersBefore);
    // A completed turn clears the streak.
    expect((await conversationOf(system, 4102))?.runtime_crash_streak).toBe(0);
    const [turn] = await system.sql<{ status: string; error: string }[]>`
      select t.status, t.error from turns t join conversations c on c.id = t.conversation_id
      where c.chat_id = '4102' and t.error = 'RUNTIME_CRASHED'`;
    expect(turn).toEqual({ status: 'failed', error: 'RUNTIME_CRASHED' });
  });

  it('interrupts a running Codex turn for a new message (busy mode interrupt) and for /stop', async () => {
    await system.sendTelegram({ chatId: 4103, text: 'hang' });
    await waitForTurnStart(setup, 'hang');
    await system.sendTelegram({ chatId: 4103, text: 'never mind' });
    expect((await system.waitForTelegram(4103, 1)).map((m) => m.text)).toEqual(['codex: never mind']);
    expect(setup.readLog().some((m) => m.received.method === 'turn/interrupt')).toBe(true);

    const interruptsBefore = setup.readLog().filter((m) => m.received.method === 'turn/interrupt').length;
    await system.sendTelegram({ chatId: 4103, text: 'hang' });
    await waitForCondition('the second hang to start', async () => turnStartsFor(setup, 'hang').length === 2, 20_000);
    await system.sendTelegram({ chatId: 4103, text: '/stop' });
    expect((await system.waitForTelegram(4103, 2)).at(-1)?.text).toBe('Stopped.');
    expect(setup.readLog().filter((m) => m.received.method === 'turn/interrupt').length).toBeGreaterThan(interruptsBefore);
    const statuses = await system.sql<{ status: string }[]>`
      select t.status from turns t join conversations c on c.id = t.conversation_id where c.chat_id = '4103' order by t.id`;
    expect(statuses.map((t) => t.status)).toEqual(['interrupted', 'completed', 'cancelled']);
  });

  it('suspends the conversation after three crashes in a row, like a restart loop, and says why on the next message', async () => {
    for (let i = 1; i <= 3; i++) {
      await system.sendTelegram({ chatId: 4104, text: 'die' });
      expect((await system.waitForTelegram(4104, i)).at(-1)?.text).toBe(crashedNotice);
    }
    await waitForCondition('the conversation to be suspended', async () => (await conversationOf(system, 4104))?.status === 'suspended', 15_000);
    expect(await conversationOf(system, 4104)).toMatchObject({ status: 'suspended', suspend_reason: 'runtime_crash_loop', runtime_crash_streak: 0, current_session_id: null });
    expect(liveWorkers(system)).toHaveLength(1);

    await system.sendTelegram({ chatId: 4104, text: 'hello again' });
    const replies = await system.waitForTelegram(4104, 5);
    expect(replies[3]?.text.startsWith(crashLoopNotice)).toBe(true);
    expect(replies[4]?.text).toBe('codex: hello again');
  });
});

describe('the resume note on the Codex runtime, through a worker process', () => {
  let system: TestSystem;
  let setup: Setup;

  beforeAll(async () => {
    setup = codexSetup();
    system = await TestSystem.start({ workerProcesses: true, workerEnv: setup.workerEnv });
  });
  afterAll(async () => {
    await system?.close();
    setup?.cleanup();
  });

  // Issue 29, defect 7: Codex stores turn/start's input as the user's message; the note must not be there.
  it('a turn cut off by a SIGKILL is resumed with the note as developer instructions, never in the user turn text', async () => {
    await system.sendTelegram({ chatId: 4301, text: 'warm up' });
    await system.waitForTelegram(4301, 1);
    await system.sendTelegram({ chatId: 4301, text: 'slow: w' });
    await waitForTurnStart(setup, 'slow: w');
    await restartWorker(system, 'SIGKILL');

    await waitForCondition('the resumed turn to complete', async () => (await turnsOf(system, 4301)).some((t, i) => i > 1 && t.status === 'completed'), 40_000);
    const starts = turnStartsFor(setup, 'slow: w');
    expect(starts).toHaveLength(2);
    for (const start of starts) expect(start.received.params?.input).toEqual([{ type: 'text', text: 'slow: w' }]);
    // The resumed turn's child loaded the thread with the note in its developer instructions.
    const resumes = setup.readLog().filter((m) => m.received.method === 'thread/resume' && m.instance === starts[1]?.instance);
    expect(resumes).toHaveLength(1);
    expect(String(resumes[0]?.received.params?.developerInstructions)).toContain(resumeNotePrefix);
    expect(JSON.stringify(setup.readLog().filter((m) => m.received.method === 'turn/start'))).not.toContain('Note from the chat gateway');
  }, 60_000);
});

describe('the Codex turn deadline', () => {
  let system: TestSystem;
  let setup: Setup;

  beforeAll(async () => {
    setup = codexSetup({ CODEX_TURN_TIMEOUT_MS: '5000' });
    system = await TestSystem.start({ workerProcesses: true, workerEnv: setup.workerEnv });
  });
  afterAll(async () => {
    await system?.close();
    setup?.cleanup();
  });

  it('stops a Codex turn at CODEX_TURN_TIMEOUT_MS, tells the user, and answers the next message', async () => {
    // The child is started first: on a loaded machine its start alone can take seconds, and then no turn is there to interrupt.
    await system.sendTelegram({ chatId: 4201, text: 'warm up' });
    await system.waitForTelegram(4201, 1);
    await system.sendTelegram({ chatId: 4201, text: 'hang' });
    expect((await system.waitForTelegram(4201, 2)).map((m) => m.text)).toEqual(['codex: warm up', timedOutNotice]);
    expect(setup.readLog().some((m) => m.received.method === 'turn/interrupt')).toBe(true);
    await system.sendTelegram({ chatId: 4201, text: 'quick one' });
    expect((await system.waitForTelegram(4201, 3)).at(-1)?.text).toBe('codex: quick one');
    const turns = await system.sql<{ status: string; error: string | null }[]>`
      select t.status, t.error from turns t join conversations c on c.id = t.conversation_id where c.chat_id = '4201' order by t.id`;
    expect(turns[1]).toEqual({ status: 'failed', error: 'TURN_TIMEOUT' });
  });
});
