import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManagedProcess } from '@switchboard/harness';
import { conversationState, slowRule, turnsOf, waitForRunningTurn } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';

// Issue 19, recovery time: a worker SIGKILLed mid-turn, with another worker
// alive, and the default heartbeat settings. The conversation must resume on
// the live worker once the dead one is found (heartbeat silence plus a
// sweep), not when the dead worker's lease runs out: the lease TTL is set to
// a minute here, so an answer well before that can only come from the lease
// being given back.
describe('recovery after a worker is killed mid-turn', () => {
  let system: TestSystem;
  const chatId = 6_100_001;
  const leaseTtlMs = 60_000;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 2, workerProcesses: true, workerEnv: { CONVERSATION_LEASE_TTL_MS: String(leaseTtlMs), LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('answers from the live worker within the dead-worker window, long before the lease would expire', async () => {
    await system.setModelScript({ rules: [slowRule('^crash me$', 1)] });
    await system.sendTelegram({ chatId, text: 'crash me' });
    const { turnId } = await waitForRunningTurn(system, chatId, 'crash me');
    const [owner] = await system.sql<{ pid: number }[]>`select w.pid from turns t join workers w on w.id = t.worker_id where t.id = ${turnId}`;
    const victim = system.workers.find((w) => 'child' in w && w.child.pid === owner?.pid) as ManagedProcess | undefined;
    expect(victim).toBeDefined();

    const killedAt = performance.now();
    await victim!.stop('SIGKILL');
    const [reply] = await system.waitForTelegram(chatId, 1, 40_000);
    const recoveryMs = performance.now() - killedAt;

    // Answered once, by the other worker, with the message the killed turn had taken.
    expect(reply?.text).toContain('crash me');
    // Default heartbeat 1 s, dead after 5 s, sweep 2 s: about 7 s. Half the lease TTL is the bound that
    // separates "lease given back" from "lease expired" without timing the machine.
    expect(recoveryMs).toBeLessThan(leaseTtlMs / 2);
    const turns = await turnsOf(system, chatId);
    expect(turns.map((t) => t.status)).toEqual(['failed', 'completed']);
    // The killed turn was cut off and counted (the count is back to 0 once a reply is delivered).
    expect(turns[0]?.cut_off).toBe(true);
    expect((await conversationState(system, chatId)).status).toBe('active');
    console.log(`recovery after SIGKILL mid-turn: ${(recoveryMs / 1000).toFixed(1)} s`);
  }, 60_000);
});
