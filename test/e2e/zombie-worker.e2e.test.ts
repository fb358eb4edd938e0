import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManagedProcess } from '@switchboard/harness';
import { fastRestartEnv, slowRule, stallUntilDeclaredDead, turnsOf, waitForRunningTurn } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';

/** apps/worker worker-heartbeat.ts declaredDeadExitCode. */
const declaredDeadExitCode = 75;

// Issue 29, defect 3 (docs/restarts.md "Declared dead"): a worker stalled past
// WORKER_DEAD_AFTER_MS (here SIGSTOP) is declared dead by its peer, which
// resumes its turn. Once it runs again it must learn that and exit, committing
// nothing of the turn it no longer holds; before the fix it went on streaming
// the old answer and taking work while its row stayed dead.
describe('a worker declared dead while stalled', () => {
  let system: TestSystem;
  const chatId = 6_200_001;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 2, workerProcesses: true, workerEnv: { ...fastRestartEnv, STREAMING: 'off' } });
  }, 60_000);
  afterAll(async () => {
    await system?.close();
  });

  it('exits without committing once it runs again; the user gets the one reply of the resumed turn', async () => {
    await system.setModelScript({ rules: [slowRule('^stall me$', 1)] });
    await system.sendTelegram({ chatId, text: 'stall me' });
    const { turnId } = await waitForRunningTurn(system, chatId, 'stall me');
    const [owner] = await system.sql<{ id: string; pid: number }[]>`select w.id, w.pid from turns t join workers w on w.id = t.worker_id where t.id = ${turnId}`;
    const stalled = system.workers.find((w) => 'child' in w && w.child.pid === owner?.pid) as ManagedProcess | undefined;
    expect(stalled).toBeDefined();
    const code = await stallUntilDeclaredDead(system, { process: stalled!, workerId: owner!.id }, async () => {
      // The peer finds the silent heartbeat, cuts the turn off and resumes it (the rule matches once: the echo answers).
      const [reply] = await system.waitForTelegram(chatId, 1, 30_000);
      expect(reply?.text).toContain('stall me');
    });
    expect(code).toBe(declaredDeadExitCode);
    // Nothing from the stalled worker reached the chat: one message, the resumed turn's, never edited.
    const sent = await (await fetch(`${system.simUrl}/control/telegram/sent?chat_id=${chatId}`)).json() as { text: string; edits?: unknown[] }[];
    expect(sent).toHaveLength(1);
    expect(sent[0]?.edits ?? []).toEqual([]);
    expect((await turnsOf(system, chatId)).map((t) => t.status)).toEqual(['failed', 'completed']);
    const [row] = await system.sql<{ status: string }[]>`select status from workers where id = ${owner!.id}`;
    expect(row?.status).toBe('dead');
  }, 90_000);
});
