import type { AskUser, RunTurnResult } from '@switchboard/agent';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeCodexSetup, isRunning, requestsNamed, turnRequest, waitLimit, type FakeCodexSetup } from './fake-codex-fixture.ts';

// Issue 29, defects 6 and 8: a stop at any point of a Codex turn ends it
// interrupted, never crashed, and starts nothing after it; what is left of a
// stopped turn (a timer, a child still finishing its interrupt) never hurts
// the next turn. Against the fake app-server as a real child.

let setup: FakeCodexSetup;
beforeEach(() => {
  setup = createFakeCodexSetup();
});
afterEach(async () => {
  await setup.cleanup();
});

/** A thread whose next thread/resume the fake answers only after `delayMs`, and a new pool (a restarted worker) that must resume it. */
async function threadWithSlowResume(delayMs: number, interruptTimeoutMs?: number) {
  const before = setup.createPool();
  const first = await before.runtimeFor(1, setup.conversation()).runTurn(turnRequest(`delay-resume: ${delayMs}`));
  expect(first.outcome).toBe('completed');
  await before.close();
  const pool = setup.createPool({ closeGraceMs: 200, ...(interruptTimeoutMs ? { interruptTimeoutMs } : {}) });
  return { pool, runtimeIds: first.runtimeIds };
}

/** Starts a turn and aborts it as soon as the fake has received `method` for it; the turn's result. */
async function stopWhilePending(run: (signal: AbortSignal) => Promise<RunTurnResult>, method: string): Promise<RunTurnResult> {
  const controller = new AbortController();
  const seenBefore = requestsNamed(setup.readLog(), method).length;
  const turn = run(controller.signal);
  await vi.waitFor(() => expect(requestsNamed(setup.readLog(), method).length).toBeGreaterThan(seenBefore), waitLimit);
  controller.abort();
  return turn;
}

describe('a stop while Codex has not answered yet', () => {
  it('thread/resume never answered: the turn ends interrupted at once, not crashed, and no turn/start is sent', async () => {
    const { pool, runtimeIds } = await threadWithSlowResume(600_000, 300);
    const runtime = pool.runtimeFor(1, setup.conversation());
    const result = await stopWhilePending((signal) => runtime.runTurn(turnRequest('hang', { signal, runtimeIds })), 'thread/resume');

    expect(result).toMatchObject({ outcome: 'interrupted', runtimeIds: { threadId: runtimeIds?.threadId } });
    expect(requestsNamed(setup.readLog(), 'turn/start')).toHaveLength(1);
  });

  it('thread/resume answered after the stop: turn/start is never sent', async () => {
    const { pool, runtimeIds } = await threadWithSlowResume(1500);
    const runtime = pool.runtimeFor(1, setup.conversation());
    const result = await stopWhilePending((signal) => runtime.runTurn(turnRequest('hang', { signal, runtimeIds })), 'thread/resume');

    expect(result.outcome).toBe('interrupted');
    // Only the first pool's turn: before the fix the late answer was followed by turn/start, then turn/interrupt.
    expect(requestsNamed(setup.readLog(), 'turn/start')).toHaveLength(1);
    expect(requestsNamed(setup.readLog(), 'turn/interrupt')).toHaveLength(0);
    const next = await runtime.runTurn(turnRequest('after', { runtimeIds }));
    expect(next).toMatchObject({ outcome: 'completed', text: 'codex: after' });
    expect(requestsNamed(setup.readLog(), 'turn/start').map((line) => JSON.stringify(line.received.params))).not.toContainEqual(expect.stringContaining('hang'));
  });

  it('turn/start never answered: the child is closed after the interrupt timeout and the turn ends interrupted, not crashed', async () => {
    const pool = setup.createPool({ interruptTimeoutMs: 300, closeGraceMs: 200 });
    const runtime = pool.runtimeFor(1, setup.conversation());
    const warm = await runtime.runTurn(turnRequest('warm up'));
    const result = await stopWhilePending((signal) => runtime.runTurn(turnRequest('delay-start: 600000', { signal, runtimeIds: warm.runtimeIds })), 'turn/start');

    expect(result).toMatchObject({ outcome: 'interrupted', runtimeIds: { threadId: warm.runtimeIds?.threadId } });
    const [stuckPid] = requestsNamed(setup.readLog(), 'initialize').map((line) => line.pid);
    await vi.waitFor(() => expect(isRunning(stuckPid as number)).toBe(false), waitLimit);
    const next = await runtime.runTurn(turnRequest('again', { runtimeIds: warm.runtimeIds }));
    expect(next).toMatchObject({ outcome: 'completed', text: 'codex: again' });
  });

  it('turn/start answered after the stop: the turn is interrupted as soon as its id is known', async () => {
    const runtime = setup.createPool().runtimeFor(1, setup.conversation());
    const warm = await runtime.runTurn(turnRequest('warm up'));
    const result = await stopWhilePending((signal) => runtime.runTurn(turnRequest('delay-start: 500', { signal, runtimeIds: warm.runtimeIds })), 'turn/start');

    expect(result).toMatchObject({ outcome: 'interrupted', runtimeIds: { threadId: warm.runtimeIds?.threadId, turnId: expect.any(String) } });
    // The fake's turn may complete before the interrupt reaches it (the result is interrupted all the same), so its log may lag.
    await vi.waitFor(() => expect(requestsNamed(setup.readLog(), 'turn/interrupt')).toHaveLength(1), waitLimit);
    expect(requestsNamed(setup.readLog(), 'turn/interrupt')[0]?.received.params).toEqual({ threadId: warm.runtimeIds?.threadId, turnId: result.runtimeIds?.turnId });
    expect(requestsNamed(setup.readLog(), 'turn/start')).toHaveLength(2);
  });
});

describe('what a stopped turn leaves behind', () => {
  it('an older-vocabulary question still open when Codex ends the turn arms no timer that closes the child under the next turn', async () => {
    const pool = setup.createPool({ interruptTimeoutMs: 300, closeGraceMs: 200 });
    const runtime = pool.runtimeFor(1, setup.conversation());
    // Nobody answers: the question is settled (cancelled) only when the turn is over.
    const askUser: AskUser = (_question, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ decision: 'cancelled' }), { once: true }));
    const first = await runtime.runTurn(turnRequest('legacy-run-abandoned: ls', { askUser }));
    expect(first).toMatchObject({ outcome: 'failed', failure: { code: 'MODEL_FAILED' } });

    // About 3 s of streaming: far longer than the 300 ms a stray interrupt timer would wait before closing the child.
    const next = await runtime.runTurn(turnRequest('slow: word', { runtimeIds: first.runtimeIds }));
    expect(next).toMatchObject({ outcome: 'completed' });
    expect(requestsNamed(setup.readLog(), 'turn/interrupt')).toHaveLength(0);
    expect(new Set(setup.readLog().map((line) => line.pid)).size).toBe(1);
  });

  it('a turn that finds the child still finishing the previous turn’s interrupt waits for it, then runs', async () => {
    const pool = setup.createPool({ interruptTimeoutMs: 1000, closeGraceMs: 200 });
    const runtime = pool.runtimeFor(1, setup.conversation());
    const controller = new AbortController();
    let accepted: () => void = () => {};
    const running = new Promise<void>((resolve) => (accepted = resolve));
    const old = runtime.runTurn(turnRequest('hang-deaf', { signal: controller.signal, onModelAccepted: () => accepted() }));
    await running;
    controller.abort();

    // A new holding of the conversation (the old one lost its lease) runs its turn while Codex ignores the interrupt.
    const next = await runtime.runTurn(turnRequest('the next message'));
    expect(next).toMatchObject({ outcome: 'completed', text: 'codex: the next message' });
    await expect(old).resolves.toMatchObject({ outcome: 'interrupted' });
  });
});
