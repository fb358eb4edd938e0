import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastRestartEnv, restartWorker, resumeNotes, turnsOf, waitForRunningTurn } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { lastUserText, modelRequests, waitForRequestFor, type ModelRequest } from '../support/turn-helpers.ts';

/**
 * The resume note is owed until a request carrying it is accepted (issue 29,
 * defect 5; docs/restarts.md "Resume once"): a turn cut off by a killed
 * worker, then a resumed turn that the model refuses with a 500 before
 * accepting it, then the next message — which must still warn the model
 * that tools of the cut-off turn may have run. Once accepted, never again.
 */

const chatId = 7401;
const text = { cut: 'c7401:cut', next: 'c7401:next', after: 'c7401:after' } as const;

describe('the resume note with real worker processes', () => {
  let system: TestSystem;
  const requestsFor = async (message: string): Promise<ModelRequest[]> => (await modelRequests(system)).filter((r) => lastUserText(r) === message);
  const send = async (message: string) => {
    const { status } = await system.sendTelegram({ chatId, text: message });
    expect(status).toBe(200);
  };
  const owed = async () => (await system.sql<{ resume_owed: boolean }[]>`
    select s.resume_owed from sessions s join conversations c on c.current_session_id = s.id where c.chat_id = ${String(chatId)}`)[0]?.resume_owed;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, workerProcesses: true, workerEnv: { ...fastRestartEnv, MODEL_MAX_RETRIES: '0' } });
    await system.setModelScript({
      default: { type: 'echo', prefix: 'echo: ' },
      rules: [
        // The first request streams long enough to be cut off; every later one for this message is a 500.
        { matchRegex: `^${text.cut}$`, replyRepeat: { text: 'word ', count: 9000 }, chunkDelayMs: 10, times: 1 },
        { matchRegex: `^${text.cut}$`, error: { status: 500, message: 'upstream exploded' } },
      ],
    });
  }, 90_000);
  afterAll(async () => {
    await system?.close();
  });

  it('is carried by the next message when the resumed turn failed before the model accepted it, and once accepted by no later request', { timeout: 90_000 }, async () => {
    await send(text.cut);
    await waitForRunningTurn(system, chatId, text.cut);
    const killed = await restartWorker(system, 'SIGKILL');
    expect(killed.signalCode).toBe('SIGKILL');

    // The new worker cuts off the dead worker's turn and resumes it: the model answers 500, the user gets one notice.
    const [notice] = await system.waitForTelegram(chatId, 1);
    expect(notice?.text).not.toContain('word');
    const cutRequests = await requestsFor(text.cut);
    expect(cutRequests.map(resumeNotes)).toEqual([0, 1]);
    expect(cutRequests[1]?.status).toBe(500);
    expect((await turnsOf(system, chatId)).map((t) => [t.status, t.cut_off])).toEqual([['failed', true], ['failed', false]]);
    expect(await owed()).toBe(true);

    // Nothing reached the model with the note yet: the next message carries it.
    await send(text.next);
    const next = await waitForRequestFor(system, text.next, 'finished');
    expect(resumeNotes(next)).toBe(1);
    const replies = await system.waitForTelegram(chatId, 2);
    expect(replies.at(-1)?.text).toBe(`echo: ${text.next}`);
    expect(await owed()).toBe(false);

    // Accepted once: no later request carries it.
    await send(text.after);
    const after = await waitForRequestFor(system, text.after, 'finished');
    expect(resumeNotes(after)).toBe(0);
    await system.waitForTelegram(chatId, 3);
  });
});
