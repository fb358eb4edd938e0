import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { registerWorker } from '@switchboard/db';
import { useTestDbClient } from '@switchboard/db/testing';
import { claimGoneLocalWorkers, isProcessRunning } from './local-peers.ts';

// Issue 19, recovery time: a worker on this machine whose process is gone is dead at the next sweep,
// without waiting WORKER_DEAD_AFTER_MS; anything else stays with the heartbeat rule.
const db = useTestDbClient();
const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
afterAll(() => {
  sleeper.kill('SIGKILL');
});

async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid as number;
}

async function addWorker(id: string, host: string, pid: number, heartbeatAgoMs: number): Promise<void> {
  await registerWorker(db.client.db, { id, hostname: host, pid });
  await db.client.db.$client`update workers set heartbeat_at = now() - ${heartbeatAgoMs}::int * interval '1 millisecond' where id = ${id}`;
}

describe(claimGoneLocalWorkers.name, () => {
  it('declares dead, once, only a stale worker of this host whose process is gone', async () => {
    const gone = await exitedPid();
    await addWorker('local-gone', hostname(), gone, 3_000);
    await addWorker('local-gone-fresh', hostname(), gone, 0);
    await addWorker('local-alive', hostname(), sleeper.pid as number, 3_000);
    await addWorker('remote-gone', `${hostname()}-elsewhere`, gone, 3_000);

    expect(await claimGoneLocalWorkers(db.client.db, 'me', 1_000)).toEqual(['local-gone']);
    expect(await claimGoneLocalWorkers(db.client.db, 'me', 1_000)).toEqual([]);
    const statuses = await db.client.db.$client<{ id: string; status: string }[]>`select id, status from workers order by id`;
    expect(Object.fromEntries(statuses.map((w) => [w.id, w.status]))).toEqual({
      'local-alive': 'running',
      'local-gone': 'dead',
      'local-gone-fresh': 'running',
      'remote-gone': 'running',
    });
  });

  it('tells a running process from a finished one', async () => {
    expect(isProcessRunning(process.pid)).toBe(true);
    expect(isProcessRunning(sleeper.pid as number)).toBe(true);
    expect(isProcessRunning(await exitedPid())).toBe(false);
    expect(isProcessRunning(0)).toBe(false);
  });
});
