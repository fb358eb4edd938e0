import { afterAll, beforeAll, expect, it } from 'vitest';
import { fastRestartEnv, slowRule, stopWorker, turnsOf, waitForRunningTurn } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { sendText, sentTo, waitForIdle } from '../support/turn-helpers.ts';

/**
 * A /stop that cancelled a turn is answered "Stopped." even when the worker
 * that cancelled it is stopped before it gets to the command, so the next
 * worker answers it (found by the randomized fault scenarios; before the fix
 * the next worker said "Nothing was running."). SIGTERM right after the
 * /stop: the turn is cancelled within milliseconds, the closing worker's loop
 * returns before the command, and the replacement handles it.
 */

const chat = 41_001;
const slow = `c${chat}:slow`;

let system: TestSystem;
beforeAll(async () => {
  system = await TestSystem.start({ workers: 1, workerProcesses: true, workerEnv: { ...fastRestartEnv, CONVERSATION_LEASE_TTL_MS: '2000' } });
  await system.setModelScript({ rules: [slowRule(`^${slow}$`)] });
}, 60_000);
afterAll(async () => {
  await system?.close();
});

it('a /stop that cancelled a turn just before a SIGTERM is answered "Stopped." by the next worker', async () => {
  await sendText(system, chat, slow);
  await waitForRunningTurn(system, chat, slow);
  await sendText(system, chat, '/stop');
  await stopWorker(system, 'SIGTERM');
  await system.addWorker(true);
  await waitForIdle(system, [chat], 30_000);
  expect((await turnsOf(system, chat)).map((t) => t.status)).toEqual(['cancelled']);
  expect((await sentTo(system, chat)).map((m) => m.text)).toEqual(['Stopped.']);
}, 60_000);
