import { describe, expect, it } from 'vitest';
import type { CodexConnection, RpcOutcome } from './codex-connection.ts';
import { requestWithRetry } from './codex-request-retry.ts';

/** A connection whose answers the test gives by hand, in the order the requests were sent. */
function handAnsweredConnection() {
  const sent: string[] = [];
  const answers: ((outcome: RpcOutcome) => void)[] = [];
  const connection = {
    request(method: string) {
      sent.push(method);
      return new Promise<RpcOutcome>((resolve) => answers.push(resolve));
    },
  } as unknown as CodexConnection;
  return { connection, sent, answer: (index: number, outcome: RpcOutcome) => answers[index]?.(outcome) };
}

const retry = { tries: 3, firstDelayMs: 1 };

describe('requestWithRetry', () => {
  it('sends nothing once the signal is aborted', async () => {
    const { connection, sent } = handAnsweredConnection();
    await expect(requestWithRetry(connection, 'turn/start', {}, { retry, signal: AbortSignal.abort() })).resolves.toEqual({ kind: 'aborted' });
    expect(sent).toEqual([]);
  });

  it('with abandonOnAbort, stops waiting for the answer at the abort (issue 29, defect 6)', async () => {
    const { connection, sent } = handAnsweredConnection();
    const controller = new AbortController();
    const outcome = requestWithRetry(connection, 'thread/resume', {}, { retry, signal: controller.signal, abandonOnAbort: true });
    controller.abort();
    await expect(outcome).resolves.toEqual({ kind: 'aborted' });
    expect(sent).toEqual(['thread/resume']);
  });

  it('without it, waits for the answer after the abort, and retries nothing after an overloaded answer', async () => {
    const { connection, sent, answer } = handAnsweredConnection();
    const controller = new AbortController();
    const outcome = requestWithRetry(connection, 'turn/start', {}, { retry, signal: controller.signal });
    controller.abort();
    answer(0, { kind: 'error', error: { code: -32001, message: 'overloaded' } });
    await expect(outcome).resolves.toEqual({ kind: 'aborted' });
    expect(sent).toEqual(['turn/start']);

    const answered = requestWithRetry(connection, 'turn/start', {}, { retry, signal: new AbortController().signal });
    answer(1, { kind: 'result', result: { turn: { id: 't1' } } });
    await expect(answered).resolves.toEqual({ kind: 'result', result: { turn: { id: 't1' } } });
  });

  it('with mayStart, sends only once the holder says yes, and nothing when it says no or the stop came while it waited', async () => {
    const { connection, sent, answer } = handAnsweredConnection();
    let confirm: (yes: boolean) => void = () => undefined;
    const waited = requestWithRetry(connection, 'turn/start', {}, { retry, signal: new AbortController().signal, mayStart: () => new Promise<boolean>((resolve) => (confirm = resolve)) });
    await Promise.resolve();
    expect(sent).toEqual([]);
    confirm(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['turn/start']);
    answer(0, { kind: 'result', result: {} });
    await expect(waited).resolves.toEqual({ kind: 'result', result: {} });

    await expect(requestWithRetry(connection, 'turn/start', {}, { retry, signal: new AbortController().signal, mayStart: () => false })).resolves.toEqual({ kind: 'aborted' });
    const controller = new AbortController();
    const stopped = requestWithRetry(connection, 'turn/start', {}, { retry, signal: controller.signal, mayStart: () => Promise.resolve(true).then((yes) => (controller.abort(), yes)) });
    await expect(stopped).resolves.toEqual({ kind: 'aborted' });
    expect(sent).toEqual(['turn/start']);
  });
});
