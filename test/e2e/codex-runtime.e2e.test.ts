import { describe, expect, it } from 'vitest';
import { turnStartsFor, useCodexSystem, waitForTurnStart } from '../support/codex-system.ts';
import { liveWorkers, resumeNotePrefix, restartWorker, turnsOf } from '../support/restart-helpers.ts';
import type { TestSystem } from '../support/system.ts';
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
  const codex = useCodexSystem();

  it('answers a Telegram message, and continues the same thread in a fresh child after the worker restarts', async () => {
    await codex.system.sendTelegram({ chatId: 4101, text: 'hello codex' });
    expect((await codex.system.waitForTelegram(4101, 1)).map((m) => m.text)).toEqual(['codex: hello codex']);
    const threadId = await threadOfChat(codex.system, 4101);
    expect(threadId).toBeTruthy();
    const firstChild = (await waitForTurnStart(codex.setup, 'hello codex')).instance;

    // A graceful restart: the worker closes its children; the next worker's child resumes the thread kept on the session.
    const [worker] = liveWorkers(codex.system);
    await worker?.stop('SIGTERM');
    await codex.system.addWorker(true);
    await codex.system.sendTelegram({ chatId: 4101, text: 'after the restart' });
    expect((await codex.system.waitForTelegram(4101, 2)).map((m) => m.text)).toEqual(['codex: hello codex', 'codex: after the restart']);
    const resumed = codex.setup.readLog().filter((m) => m.received.method === 'thread/resume');
    expect(resumed.map((m) => m.received.params?.threadId)).toContain(threadId);
    expect((await waitForTurnStart(codex.setup, 'after the restart')).instance).not.toBe(firstChild);
    expect(await threadOfChat(codex.system, 4101)).toBe(threadId);
  });

  it('tells the user once when the child dies mid-turn; the worker lives on and a fresh child answers the next message', async () => {
    await codex.system.sendTelegram({ chatId: 4102, text: 'warm up' });
    await codex.system.waitForTelegram(4102, 1);
    const workersBefore = liveWorkers(codex.system).map((w) => w.child.pid);
    await codex.system.sendTelegram({ chatId: 4102, text: 'die' });
    expect((await codex.system.waitForTelegram(4102, 2)).map((m) => m.text)).toEqual(['codex: warm up', crashedNotice]);
    expect((await conversationOf(codex.system, 4102))?.runtime_crash_streak).toBe(1);
    const diedChild = (await waitForTurnStart(codex.setup, 'die')).instance;

    await codex.system.sendTelegram({ chatId: 4102, text: 'still there?' });
    expect((await codex.system.waitForTelegram(4102, 3)).at(-1)?.text).toBe('codex: still there?');
    expect((await waitForTurnStart(codex.setup, 'still there?')).instance).not.toBe(diedChild);
    expect(liveWorkers(codex.system).map((w) => w.child.pid)).toEqual(workersBefore);
    // A completed turn clears the streak.
    expect((await conversationOf(codex.system, 4102))?.runtime_crash_streak).toBe(0);
    const [turn] = await codex.system.sql<{ status: string; error: string }[]>`
      select t.status, t.error from turns t join conversations c on c.id = t.conversation_id
      where c.chat_id = '4102' and t.error = 'RUNTIME_CRASHED'`;
    expect(turn).toEqual({ status: 'failed', error: 'RUNTIME_CRASHED' });
  });

  it('interrupts a running Codex turn for a new message (busy mode interrupt) and for /stop', async () => {
    await codex.system.sendTelegram({ chatId: 4103, text: 'hang' });
    await waitForTurnStart(codex.setup, 'hang');
    await codex.system.sendTelegram({ chatId: 4103, text: 'never mind' });
    expect((await codex.system.waitForTelegram(4103, 1)).map((m) => m.text)).toEqual(['codex: never mind']);
    expect(codex.setup.readLog().some((m) => m.received.method === 'turn/interrupt')).toBe(true);

    const interruptsBefore = codex.setup.readLog().filter((m) => m.received.method === 'turn/interrupt').length;
    await codex.system.sendTelegram({ chatId: 4103, text: 'hang' });
    await waitForCondition('the second hang to start', async () => turnStartsFor(codex.setup, 'hang').length === 2, 20_000);
    await codex.system.sendTelegram({ chatId: 4103, text: '/stop' });
    expect((await codex.system.waitForTelegram(4103, 2)).at(-1)?.text).toBe('Stopped.');
    expect(codex.setup.readLog().filter((m) => m.received.method === 'turn/interrupt').length).toBeGreaterThan(interruptsBefore);
    const statuses = await codex.system.sql<{ status: string }[]>`
      select t.status from turns t join conversations c on c.id = t.conversation_id where c.chat_id = '4103' order by t.id`;
    expect(statuses.map((t) => t.status)).toEqual(['interrupted', 'completed', 'cancelled']);
  });

  it('suspends the conversation after three crashes in a row, like a restart loop, and says why on the next message', async () => {
    for (let i = 1; i <= 3; i++) {
      await codex.system.sendTelegram({ chatId: 4104, text: 'die' });
      expect((await codex.system.waitForTelegram(4104, i)).at(-1)?.text).toBe(crashedNotice);
    }
    await waitForCondition('the conversation to be suspended', async () => (await conversationOf(codex.system, 4104))?.status === 'suspended', 15_000);
    expect(await conversationOf(codex.system, 4104)).toMatchObject({ status: 'suspended', suspend_reason: 'runtime_crash_loop', runtime_crash_streak: 0, current_session_id: null });
    expect(liveWorkers(codex.system)).toHaveLength(1);

    await codex.system.sendTelegram({ chatId: 4104, text: 'hello again' });
    const replies = await codex.system.waitForTelegram(4104, 5);
    expect(replies[3]?.text.startsWith(crashLoopNotice)).toBe(true);
    expect(replies[4]?.text).toBe('codex: hello again');
  });
});

describe('the resume note on the Codex runtime, through a worker process', () => {
  const codex = useCodexSystem();

  // Issue 29, defect 7: Codex stores turn/start's input as the user's message; the note must not be there.
  it('a turn cut off by a SIGKILL is resumed with the note as developer instructions, never in the user turn text', async () => {
    await codex.system.sendTelegram({ chatId: 4301, text: 'warm up' });
    await codex.system.waitForTelegram(4301, 1);
    await codex.system.sendTelegram({ chatId: 4301, text: 'slow: w' });
    await waitForTurnStart(codex.setup, 'slow: w');
    await restartWorker(codex.system, 'SIGKILL');

    await waitForCondition('the resumed turn to complete', async () => (await turnsOf(codex.system, 4301)).some((t, i) => i > 1 && t.status === 'completed'), 40_000);
    const starts = turnStartsFor(codex.setup, 'slow: w');
    expect(starts).toHaveLength(2);
    for (const start of starts) expect(start.received.params?.input).toEqual([{ type: 'text', text: 'slow: w' }]);
    // The resumed turn's child loaded the thread with the note in its developer instructions.
    const resumes = codex.setup.readLog().filter((m) => m.received.method === 'thread/resume' && m.instance === starts[1]?.instance);
    expect(resumes).toHaveLength(1);
    expect(String(resumes[0]?.received.params?.developerInstructions)).toContain(resumeNotePrefix);
    expect(JSON.stringify(codex.setup.readLog().filter((m) => m.received.method === 'turn/start'))).not.toContain('Note from the chat gateway');
  }, 60_000);
});

describe('the Codex turn deadline', () => {
  const codex = useCodexSystem({ CODEX_TURN_TIMEOUT_MS: '5000' });

  it('stops a Codex turn at CODEX_TURN_TIMEOUT_MS, tells the user, and answers the next message', async () => {
    // The child is started first: on a loaded machine its start alone can take seconds, and then no turn is there to interrupt.
    await codex.system.sendTelegram({ chatId: 4201, text: 'warm up' });
    await codex.system.waitForTelegram(4201, 1);
    await codex.system.sendTelegram({ chatId: 4201, text: 'hang' });
    expect((await codex.system.waitForTelegram(4201, 2)).map((m) => m.text)).toEqual(['codex: warm up', timedOutNotice]);
    expect(codex.setup.readLog().some((m) => m.received.method === 'turn/interrupt')).toBe(true);
    await codex.system.sendTelegram({ chatId: 4201, text: 'quick one' });
    expect((await codex.system.waitForTelegram(4201, 3)).at(-1)?.text).toBe('codex: quick one');
    const turns = await codex.system.sql<{ status: string; error: string | null }[]>`
      select t.status, t.error from turns t join conversations c on c.id = t.conversation_id where c.chat_id = '4201' order by t.id`;
    expect(turns[1]).toEqual({ status: 'failed', error: 'TURN_TIMEOUT' });
  });
});
