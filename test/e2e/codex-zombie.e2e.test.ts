import { describe, expect, it } from 'vitest';
import type { ManagedProcess } from '@switchboard/harness';
import { isFakeRunning, turnStartsFor, useCodexSystem, waitForTurnStart } from '../support/codex-system.ts';
import { stallUntilDeclaredDead } from '../support/restart-helpers.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

/** apps/worker worker-heartbeat.ts declaredDeadExitCode. */
const declaredDeadExitCode = 75;

// A worker stalled (SIGSTOP) while its Codex child loads the thread is
// declared dead, and its peer answers the message. Woken, the first code the
// stalled worker runs is often the late thread/resume answer's continuation:
// before the fix it sent turn/start at once, so Codex began a second turn on
// input the peer had already answered (the scenario test's Codex input check,
// SEED=3946306590 batch 5 on CI), before the next heartbeat ended the process.
// Now turn/start waits for a fresh beat (RunTurnRequest.mayHandOver), which a
// worker declared dead never gets.
describe('a Codex worker declared dead while its child loads the thread', () => {
  const codex = useCodexSystem({ CODEX_IDLE_MS: '1000', STREAMING: 'off' });

  it('never starts Codex on the message once it runs again; the peer answers it once', async () => {
    const { system, setup } = codex;
    await system.addWorker(true);
    const chatId = 6_300_001;
    await system.sendTelegram({ chatId, text: 'delay-resume: 1200' });
    await system.waitForTelegram(chatId, 1);
    const { instance } = await waitForTurnStart(setup, 'delay-resume: 1200');
    await waitForCondition('the idle child to be closed', async () => !isFakeRunning(instance), 20_000);

    const resumes = () => setup.readLog().filter((m) => m.received.method === 'thread/resume').length;
    const resumesBefore = resumes();
    await system.sendTelegram({ chatId, text: 'stalled question' });
    await waitForCondition('the new child to send thread/resume', async () => resumes() > resumesBefore, 20_000);
    const [owner] = await system.sql<{ id: string; pid: number }[]>`
      select w.id, w.pid from turns t join workers w on w.id = t.worker_id join conversations c on c.id = t.conversation_id
      where c.chat_id = ${String(chatId)} and t.status = 'running'`;
    const stalled = system.workers.find((w) => 'child' in w && w.child.pid === owner?.pid) as ManagedProcess | undefined;
    expect(stalled).toBeDefined();
    const code = await stallUntilDeclaredDead(system, { process: stalled!, workerId: owner!.id }, async () => {
      // The late resume answer reaches the frozen worker's pipe; the peer declares it dead and answers the message.
      expect((await system.waitForTelegram(chatId, 2, 30_000)).at(-1)?.text).toBe('codex: stalled question');
    });
    expect(code).toBe(declaredDeadExitCode);
    // Codex began one turn on the message, the peer's; the woken worker sent its child nothing more.
    expect(turnStartsFor(setup, 'stalled question')).toHaveLength(1);
    expect(await system.waitForTelegram(chatId, 2)).toHaveLength(2);
  }, 90_000);
});
