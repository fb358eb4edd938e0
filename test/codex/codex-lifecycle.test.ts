import type { AskUser } from '@switchboard/agent';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeCodexSetup, waitLimit, isRunning, requestsNamed, turnRequest, type FakeCodexSetup } from './fake-codex-fixture.ts';

// The Codex runtime's children: interrupts, crashes, overload, restarts
// (resume), idle close, the cap, and a command that does not start.

let setup: FakeCodexSetup;
beforeEach(() => {
  setup = createFakeCodexSetup();
});
afterEach(async () => {
  await setup.cleanup();
});

const pidsOf = (setup: FakeCodexSetup, method: string) => requestsNamed(setup.readLog(), method).map((line) => line.pid);

describe('interrupts', () => {
  it('an abort mid-turn sends turn/interrupt and the turn ends interrupted', async () => {
    const controller = new AbortController();
    const runtime = setup.createPool().runtimeFor(1, setup.conversation());
    const result = await runtime.runTurn(turnRequest('hang', { signal: controller.signal, onModelAccepted: () => controller.abort() }));

    expect(result.outcome).toBe('interrupted');
    expect(requestsNamed(setup.readLog(), 'turn/interrupt')[0]?.received.params).toEqual({ threadId: result.runtimeIds?.threadId, turnId: result.runtimeIds?.turnId });
    // The child ended the turn as asked: it is kept for the next turn.
    const next = await runtime.runTurn(turnRequest('after', { runtimeIds: result.runtimeIds }));
    expect(next).toMatchObject({ outcome: 'completed', text: 'codex: after' });
    expect(new Set(setup.readLog().map((line) => line.pid)).size).toBe(1);
  });

  it('an abort while the user is asked: the question is cancelled, and the unfinished command gets a cancelled result', async () => {
    const controller = new AbortController();
    // Honours the signal like the worker's askUser: the abort answers it 'cancelled'.
    const askUser: AskUser = (_question, signal) => {
      controller.abort();
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve({ decision: 'cancelled' }), { once: true }));
    };
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('run: make deploy', { signal: controller.signal, askUser }));

    expect(result.outcome).toBe('interrupted');
    expect(requestsNamed(setup.readLog(), 'turn/interrupt')).toHaveLength(1);
    expect(result.toolIterations).toBe(1);
    const [call, toolResult] = result.entries;
    expect(call).toMatchObject({ role: 'assistant', toolCalls: [{ name: 'shell' }] });
    expect(toolResult).toMatchObject({ role: 'tool', toolName: 'shell', content: expect.stringMatching(/^cancelled/) });
    expect(toolResult?.role === 'tool' && call?.role === 'assistant' && toolResult.toolCallId === call.toolCalls?.[0]?.id).toBe(true);
  });

  it('a turn stopped before it began starts no child and hands the thread id back', async () => {
    const pool = setup.createPool();
    const result = await pool.runtimeFor(1, setup.conversation()).runTurn(turnRequest('hi', { signal: AbortSignal.abort(), runtimeIds: { threadId: 'thr_kept' } }));
    expect(result).toEqual({ outcome: 'interrupted', entries: [], toolIterations: 0, runtimeIds: { threadId: 'thr_kept' } });
    expect(pool.size).toBe(0);
    expect(setup.readLog()).toEqual([]);
  });

  it('a turn stopped while its child never answers initialize ends interrupted at once, and the pool does not keep that child', async () => {
    const pool = setup.createPool({ env: { ...setup.env, FAKE_CODEX_SILENT_INIT: '1' }, closeGraceMs: 200 });
    const controller = new AbortController();
    const turn = pool.runtimeFor(1, setup.conversation()).runTurn(turnRequest('hi', { signal: controller.signal, runtimeIds: { threadId: 'thr_kept' } }));
    await vi.waitFor(() => expect(pidsOf(setup, 'initialize')).toHaveLength(1), waitLimit);
    const [stuckPid] = pidsOf(setup, 'initialize');

    const abortedAt = Date.now();
    controller.abort();
    const result = await turn;
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(result).toEqual({ outcome: 'interrupted', entries: [], toolIterations: 0, runtimeIds: { threadId: 'thr_kept' } });
    expect(pool.size).toBe(0);
    await vi.waitFor(() => expect(isRunning(stuckPid as number)).toBe(false), waitLimit);
    // The stuck child was asked nothing more; the next turn would start a fresh one.
    expect(setup.readLog().map((line) => line.received.method)).toEqual(['initialize']);
  });

  it('a child that ignores turn/interrupt is killed after the timeout; the turn is interrupted and the next one gets a fresh child', async () => {
    const controller = new AbortController();
    const pool = setup.createPool({ interruptTimeoutMs: 300, closeGraceMs: 200 });
    const runtime = pool.runtimeFor(1, setup.conversation());
    const result = await runtime.runTurn(turnRequest('hang-deaf', { signal: controller.signal, onModelAccepted: () => controller.abort() }));

    expect(result.outcome).toBe('interrupted');
    const [stuckPid] = pidsOf(setup, 'turn/interrupt');
    await vi.waitFor(() => expect(isRunning(stuckPid as number)).toBe(false), waitLimit);
    const next = await runtime.runTurn(turnRequest('again', { runtimeIds: result.runtimeIds }));
    expect(next).toMatchObject({ outcome: 'completed', text: 'codex: again', runtimeIds: { threadId: result.runtimeIds?.threadId } });
    expect(pidsOf(setup, 'thread/resume')[0]).not.toBe(stuckPid);
  });
});

describe('crashes and overload', () => {
  it('a child that dies mid-turn fails the turn RUNTIME_CRASHED, and the next turn runs on a fresh child', async () => {
    const pool = setup.createPool();
    const runtime = pool.runtimeFor(1, setup.conversation());
    const crashed = await runtime.runTurn(turnRequest('die'));
    expect(crashed).toMatchObject({ outcome: 'failed', failure: { code: 'RUNTIME_CRASHED' } });
    expect(pool.size).toBe(0);

    const next = await runtime.runTurn(turnRequest('still there?', { runtimeIds: crashed.runtimeIds }));
    expect(next).toMatchObject({ outcome: 'completed', text: 'codex: still there?' });
    const [firstPid, secondPid] = pidsOf(setup, 'initialize');
    expect(secondPid).toBeDefined();
    expect(secondPid).not.toBe(firstPid);
  });

  it('a -32001 answer to turn/start is retried and the turn completes', async () => {
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('overloaded'));
    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: overloaded' });
    expect(requestsNamed(setup.readLog(), 'turn/start')).toHaveLength(2);
  });

  it('a server that stays overloaded fails the turn MODEL_RATE_LIMITED after the tries', async () => {
    const pool = setup.createPool({ overloadRetry: { tries: 3, firstDelayMs: 10 } });
    const result = await pool.runtimeFor(1, setup.conversation()).runTurn(turnRequest('overloaded-always'));
    expect(result).toMatchObject({ outcome: 'failed', failure: { code: 'MODEL_RATE_LIMITED' } });
    expect(requestsNamed(setup.readLog(), 'turn/start')).toHaveLength(3);
  });

  it('a command that cannot start fails the turn RUNTIME_CRASHED without throwing', async () => {
    const missing = setup.createPool({ command: '/nonexistent/codex app-server' });
    await expect(missing.runtimeFor(1, setup.conversation()).runTurn(turnRequest('hi'))).resolves.toMatchObject({
      outcome: 'failed',
      failure: { code: 'RUNTIME_CRASHED', message: expect.stringContaining('ENOENT') },
    });
    expect(missing.size).toBe(0);
    const unterminated = setup.createPool({ command: 'codex "app-server' });
    await expect(unterminated.runtimeFor(1, setup.conversation()).runTurn(turnRequest('hi'))).resolves.toMatchObject({
      outcome: 'failed',
      failure: { code: 'RUNTIME_CRASHED' },
    });
  });
});

describe('threads across restarts', () => {
  it('a new pool (a restarted worker) resumes the stored thread id on its new child', async () => {
    const before = setup.createPool();
    const first = await before.runtimeFor(1, setup.conversation()).runTurn(turnRequest('remember me'));
    await before.close();

    const after = setup.createPool();
    const second = await after.runtimeFor(1, setup.conversation()).runTurn(turnRequest('again', { runtimeIds: first.runtimeIds, history: [{ role: 'user', content: 'remember me' }] }));

    expect(second).toMatchObject({ outcome: 'completed', runtimeIds: { threadId: first.runtimeIds?.threadId } });
    const resumes = requestsNamed(setup.readLog(), 'thread/resume');
    expect(resumes.map((line) => line.received.params?.threadId)).toEqual([first.runtimeIds?.threadId]);
    expect(resumes[0]?.pid).not.toBe(pidsOf(setup, 'thread/start')[0]);
    // A resumed thread has its own context: the history is not sent again.
    expect(requestsNamed(setup.readLog(), 'turn/start')[1]?.received.params?.input).toEqual([{ type: 'text', text: 'again' }]);
  });

  it('a thread Codex does not know is replaced by a new one that gets the history as context', async () => {
    const history = [
      { role: 'user' as const, kind: 'summary' as const, content: 'they talked about tests' },
      { role: 'assistant' as const, content: 'Tests pass.' },
    ];
    const result = await setup
      .createPool()
      .runtimeFor(1, setup.conversation())
      .runTurn(turnRequest('what now?', { runtimeIds: { threadId: 'thr_00000000-0000-0000-0000-000000000000' }, history }));

    expect(result.outcome).toBe('completed');
    expect(result.runtimeIds?.threadId).not.toBe('thr_00000000-0000-0000-0000-000000000000');
    const text = (requestsNamed(setup.readLog(), 'turn/start')[0]?.received.params?.input as { text: string }[])[0]?.text;
    expect(text).toBe(
      '[Earlier conversation in this chat, for context:]\nSummary of what came before: they talked about tests\nAssistant: Tests pass.\n[End of earlier conversation.]\n\nwhat now?',
    );
  });
});

describe('the pool', () => {
  it('closes a child after idleMs without a turn', async () => {
    const pool = setup.createPool({ idleMs: 150 });
    await pool.runtimeFor(1, setup.conversation()).runTurn(turnRequest('hi'));
    const [pid] = pidsOf(setup, 'initialize');
    expect(pool.size).toBe(1);
    await vi.waitFor(() => expect(pool.size).toBe(0), waitLimit);
    await vi.waitFor(() => expect(isRunning(pid as number)).toBe(false), waitLimit);
  });

  it('at the cap, a new conversation closes the least recently used idle child; with every child busy it is refused, retryable', async () => {
    const pool = setup.createPool({ maxChildren: 1 });
    await pool.runtimeFor(1, setup.conversation()).runTurn(turnRequest('first'));
    const [firstPid] = pidsOf(setup, 'initialize');

    const controller = new AbortController();
    let accepted: () => void = () => {};
    const busy = new Promise<void>((resolve) => (accepted = resolve));
    const hanging = pool.runtimeFor(2, setup.conversation()).runTurn(turnRequest('hang', { signal: controller.signal, onModelAccepted: () => accepted() }));
    await busy;
    expect(pool.size).toBe(1);
    await vi.waitFor(() => expect(isRunning(firstPid as number)).toBe(false), waitLimit);

    const refused = await pool.runtimeFor(3, setup.conversation()).runTurn(turnRequest('me too'));
    expect(refused).toMatchObject({ outcome: 'failed', failure: { code: 'MODEL_RATE_LIMITED', message: expect.stringContaining('capacity is full') } });

    controller.abort();
    await expect(hanging).resolves.toMatchObject({ outcome: 'interrupted' });
  });

  it('one user\'s turns hold at most maxChildrenPerUser children; another user\'s turn still runs (issue 30, finding 8)', async () => {
    const pool = setup.createPool({ maxChildren: 4, maxChildrenPerUser: 1 });
    const controller = new AbortController();
    let accepted: () => void = () => {};
    const busy = new Promise<void>((resolve) => (accepted = resolve));
    // A turn of user A that holds its child (as one waiting on an approval does).
    const holding = pool.runtimeFor(1, setup.conversation()).runTurn(turnRequest('hang', { signal: controller.signal, onModelAccepted: () => accepted(), userKey: 'telegram:1:A' }));
    await busy;

    const refused = await pool.runtimeFor(2, setup.conversation()).runTurn(turnRequest('me too', { userKey: 'telegram:1:A' }));
    expect(refused).toMatchObject({ outcome: 'failed', failure: { code: 'MODEL_RATE_LIMITED', message: expect.stringContaining('CODEX_MAX_CHILDREN_PER_USER') } });
    expect(pool.size).toBe(1);
    expect(await pool.runtimeFor(3, setup.conversation()).runTurn(turnRequest('hello', { userKey: 'telegram:1:B' }))).toMatchObject({ outcome: 'completed', text: 'codex: hello' });

    controller.abort();
    await expect(holding).resolves.toMatchObject({ outcome: 'interrupted' });
    // Its child free again, user A's next turn runs.
    expect(await pool.runtimeFor(2, setup.conversation()).runTurn(turnRequest('again', { userKey: 'telegram:1:A' }))).toMatchObject({ outcome: 'completed', text: 'codex: again' });
  });

  it('close() ends every child', async () => {
    const pool = setup.createPool();
    await Promise.all([1, 2].map((id) => pool.runtimeFor(id, setup.conversation()).runTurn(turnRequest(`hi ${id}`))));
    const pids = pidsOf(setup, 'initialize');
    expect(pool.size).toBe(2);
    await pool.close();
    expect(pool.size).toBe(0);
    expect(pids.map(isRunning)).toEqual([false, false]);
  });
});

describe('the child’s environment', () => {
  // Issue 30, finding 1: a child got the worker's process.env; now the pool's childEnv decides all of it (docs/codex.md, "What a child gets").
  const fakeEnv = () => ({ PATH: process.env.PATH, FAKE_CODEX_STATE_DIR: setup.env.FAKE_CODEX_STATE_DIR, FAKE_CODEX_LOG: setup.env.FAKE_CODEX_LOG });

  it('is exactly what childEnv gives for the conversation, prepared at each spawn', async () => {
    const asked: number[] = [];
    const pool = setup.createPool({
      childEnv: (conversationId) => {
        asked.push(conversationId);
        return Promise.resolve({ kind: 'ready', env: { ...fakeEnv(), CODEX_HOME: `/homes/${conversationId}/.codex` } });
      },
    });
    const result = await pool.runtimeFor(7, setup.conversation({ autoApprove: true })).runTurn(turnRequest('run: env'));
    expect(result.outcome).toBe('completed');
    const printed = result.outcome === 'completed' ? result.text.split('\n').slice(1).filter(Boolean) : [];
    expect(printed.map((line) => line.slice(0, line.indexOf('=')))).toEqual(['CODEX_HOME', 'FAKE_CODEX_LOG', 'FAKE_CODEX_STATE_DIR', 'PATH']);
    expect(printed).toContain('CODEX_HOME=/homes/7/.codex');
    await pool.runtimeFor(7, setup.conversation()).runTurn(turnRequest('again'));
    expect(asked).toEqual([7]);
  });

  it('that cannot be prepared fails the turn RUNTIME_CRASHED, spawns nothing, and the next turn tries again', async () => {
    let calls = 0;
    const pool = setup.createPool({
      childEnv: () => {
        calls += 1;
        if (calls === 1) return Promise.resolve({ kind: 'failed', reason: 'CODEX_HOMES: outside_root' });
        if (calls === 2) return Promise.reject(new Error('EACCES'));
        return Promise.resolve({ kind: 'ready', env: fakeEnv() });
      },
    });
    const runtime = pool.runtimeFor(1, setup.conversation());
    expect(await runtime.runTurn(turnRequest('hi'))).toMatchObject({ outcome: 'failed', failure: { code: 'RUNTIME_CRASHED', message: expect.stringContaining('outside_root') } });
    expect(await runtime.runTurn(turnRequest('hi'))).toMatchObject({ outcome: 'failed', failure: { code: 'RUNTIME_CRASHED', message: expect.stringContaining('EACCES') } });
    expect(pool.size).toBe(0);
    expect(requestsNamed(setup.readLog(), 'initialize')).toHaveLength(0);
    expect(await runtime.runTurn(turnRequest('hi'))).toMatchObject({ outcome: 'completed', text: 'codex: hi' });
  });
});
