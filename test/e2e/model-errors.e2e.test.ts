import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, type ManagedProcess } from '@switchboard/harness';
import { conversationState, turnsOf } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { lastUserText, modelRequests, waitForCondition, waitForIdle, waitForRequestFor, type ModelRequest } from '../support/turn-helpers.ts';

/**
 * A model that answers 429 or 5xx (issue 16, defect 1; docs/turns.md "Model
 * errors"). The worker is a real process: the defect was an uncaught error
 * from the model fetch that shut the whole process down, cutting off every
 * running turn and counting each as a restart. Each chat plays one case
 * against the same worker, which must still be the same live process at the end.
 */

const chats = { retried: 7301, rateLimited: 7302, serverError: 7303, tooLong: 7304, afterStray: 7305, interrupted: 7306 } as const;
/** The lines a user sees for a turn that failed (apps/worker run-turn.ts `notices`). */
const rateLimitedNotice = 'I am getting too many requests right now. Please try again in a minute.';
const failedNotice = 'Sorry, something went wrong and I could not answer that. Please try again.';
/**
 * Preloaded into the worker process: on SIGWINCH (which nothing else in the
 * worker listens to) it throws from an event listener and rejects a promise
 * nobody awaits, the two ways an error reaches no handler.
 */
const plantStrayErrors = "--import=data:text/javascript,process.on('SIGWINCH',()=>{Promise.reject(new(Error)('planted-rejection'));throw(new(Error)('planted-exception'))})";

describe('model errors with a real worker process', () => {
  let system: TestSystem;
  let worker: ManagedProcess;

  const send = async (chatId: number, text: string) => {
    const { status } = await system.sendTelegram({ chatId, text });
    expect(status).toBe(200);
  };
  const requestsFor = async (prefix: string): Promise<ModelRequest[]> => (await modelRequests(system)).filter((r) => lastUserText(r).startsWith(prefix));
  const expectWorkerAlive = () => {
    expect(worker.child.exitCode).toBeNull();
    expect(worker.child.signalCode).toBeNull();
  };
  /** No restart counted and no turn cut off: a model error is never a restart (docs/restarts.md). */
  const expectNoRestart = async (chatId: number) => {
    const state = await conversationState(system, chatId);
    expect({ status: state.status, restarts: state.restart_count }).toEqual({ status: 'active', restarts: 0 });
    expect((await turnsOf(system, chatId)).filter((t) => t.cut_off || t.status === 'running')).toEqual([]);
  };

  beforeAll(async () => {
    system = await TestSystem.start({
      workerProcesses: true,
      // LOG_LEVEL info: the worker's 'worker started' line names its health URL.
      workerEnv: { MODEL_MAX_RETRIES: '2', MODEL_RETRY_MAX_WAIT_MS: '5000', LOG_LEVEL: 'info', NODE_OPTIONS: plantStrayErrors },
    });
    worker = system.workers[0] as ManagedProcess;
    await system.setModelScript({
      rules: [
        // Once 429 with a whole-second Retry-After, then the default echo answers.
        { match: 'c7301:first', error: { status: 429, retryAfter: 1 }, times: 1 },
        // For good: every try of these is refused.
        { match: 'c7302:busy', error: { status: 429, retryAfterMs: 50 } },
        { match: 'c7303:broken', error: { status: 500, message: 'upstream exploded' } },
        // Asks for longer than the turn may wait (MODEL_RETRY_MAX_WAIT_MS above).
        { match: 'c7304:later', error: { status: 429, retryAfter: 3600 } },
        // Within the limit, but long enough that a turn waiting it out would be seen waiting.
        { match: 'c7306:wait', error: { status: 429, retryAfter: 4 } },
      ],
    });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('retries a 429 after its Retry-After and sends the real answer once', async () => {
    await send(chats.retried, 'c7301:first');
    const [reply] = await system.waitForTelegram(chats.retried, 1);
    expect(reply?.text).toBe('echo: c7301:first');
    const tries = await requestsFor('c7301:first');
    expect(tries.map((r) => r.status)).toEqual([429, 200]);
    // Retry-After: 1 was honoured (the SDK's own backoff would have waited about 0.5 s).
    expect((tries[1]?.receivedAt ?? 0) - (tries[0]?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
    // The next message's answer follows directly: no second reply to the first message in between.
    await send(chats.retried, 'c7301:second');
    const replies = await system.waitForTelegram(chats.retried, 2);
    expect(replies.map((r) => r.text)).toEqual(['echo: c7301:first', 'echo: c7301:second']);
    await expectNoRestart(chats.retried);
    expectWorkerAlive();
  });

  it.each([
    { status: 429, chatId: chats.rateLimited, text: 'c7302:busy', notice: rateLimitedNotice },
    { status: 500, chatId: chats.serverError, text: 'c7303:broken', notice: failedNotice },
  ])('answers a model that keeps failing with $status with one notice, counts no restart and goes on', async ({ status, chatId, text, notice }) => {
    await send(chatId, text);
    const [first] = await system.waitForTelegram(chatId, 1);
    expect(first?.text).toBe(notice);
    // One try and MODEL_MAX_RETRIES retries, then the turn failed.
    expect((await requestsFor(text)).map((r) => r.status)).toEqual([status, status, status]);
    const [turn] = await turnsOf(system, chatId);
    expect(turn).toMatchObject({ status: 'failed', cut_off: false });
    await expectNoRestart(chatId);
    // The same worker process answers the next message, and the notice was the only line before it.
    await send(chatId, `c${chatId}:after`);
    const replies = await system.waitForTelegram(chatId, 2);
    expect(replies.map((r) => r.text)).toEqual([notice, `echo: c${chatId}:after`]);
    await expectNoRestart(chatId);
    expectWorkerAlive();
  });

  it('does not wait out a Retry-After longer than a turn may wait: one try, one notice', async () => {
    const sentAt = Date.now();
    await send(chats.tooLong, 'c7304:later');
    const [first] = await system.waitForTelegram(chats.tooLong, 1);
    expect(first?.text).toBe(rateLimitedNotice);
    expect(Date.now() - sentAt).toBeLessThan(10_000);
    expect((await requestsFor('c7304:later')).map((r) => r.status)).toEqual([429]);
    await expectNoRestart(chats.tooLong);
    expectWorkerAlive();
  });

  it('stops a turn that waits to retry as soon as new input comes (interrupt mode), without waiting out Retry-After', async () => {
    await send(chats.interrupted, 'c7306:wait');
    await waitForRequestFor(system, 'c7306:wait', 'finished');
    const sentAt = Date.now();
    await send(chats.interrupted, 'c7306:now');
    const [reply] = await system.waitForTelegram(chats.interrupted, 1);
    expect(reply?.text).toBe('echo: c7306:now');
    expect(Date.now() - sentAt).toBeLessThan(3_000);
    await waitForIdle(system, [chats.interrupted]);
    // Never retried: the wait ended with the turn, which left no line of its own.
    expect((await requestsFor('c7306:wait')).map((r) => r.status)).toEqual([429]);
    expect((await turnsOf(system, chats.interrupted)).map((t) => t.status)).toEqual(['interrupted', 'completed']);
    expect((await system.waitForTelegram(chats.interrupted, 1)).map((r) => r.text)).toEqual(['echo: c7306:now']);
    await expectNoRestart(chats.interrupted);
  });

  it('logs and counts an error that reached no handler, and the worker goes on', async () => {
    const logPath = join(repoRoot, 'test-results/logs', `${worker.name}.log`);
    const logLines = async () => (await readFile(logPath, 'utf8')).split('\n').filter((line) => line.startsWith('{'));
    const started = (await logLines()).map((line) => JSON.parse(line) as { msg?: string; url?: string }).find((entry) => entry.msg === 'worker started');
    const metricsUrl = `${started?.url}/metrics`;
    const unexpectedErrors = async () => {
      const text = await (await fetch(metricsUrl)).text();
      return Number(/^switchboard_worker_unexpected_errors_total\{where="process"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    expect(await unexpectedErrors()).toBe(0);
    worker.child.kill('SIGWINCH');
    await waitForCondition('two unexpected errors counted', async () => (await unexpectedErrors()) === 2, 10_000);
    const logged = async () => (await logLines()).filter((line) => line.includes('unexpected error; the worker goes on'));
    // The log reaches the file through a pipe, a little after the counter moved.
    await waitForCondition('both errors logged', async () => (await logged()).length === 2, 10_000);
    expect((await logged()).map((line) => (JSON.parse(line) as { origin: string }).origin).sort()).toEqual(['uncaughtException', 'unhandledRejection']);
    await send(chats.afterStray, 'c7305:still there?');
    const [reply] = await system.waitForTelegram(chats.afterStray, 1);
    expect(reply?.text).toBe('echo: c7305:still there?');
    expectWorkerAlive();
  });
});
