import { hostname } from 'node:os';
import { claimWorkerDead, listStaleWorkersOnHost, type Database } from '@switchboard/db';

/**
 * A worker on this machine whose process is gone is dead now, not when its
 * heartbeat is WORKER_DEAD_AFTER_MS old (issue 19: a killed worker's
 * conversations answered within 10 s). The process table is the proof; the
 * stale heartbeat (two beats missed) guards against another machine that
 * shares this hostname, whose pids mean nothing here. A reused pid reads as
 * alive, which only falls back to the heartbeat rule.
 */
export async function claimGoneLocalWorkers(db: Database, ownWorkerId: string, heartbeatIntervalMs: number): Promise<string[]> {
  const staleAfterMs = 2 * heartbeatIntervalMs;
  const candidates = await listStaleWorkersOnHost(db, hostname(), staleAfterMs);
  const claimed: string[] = [];
  for (const peer of candidates) {
    if (peer.id === ownWorkerId || peer.pid === process.pid || isProcessRunning(peer.pid)) continue;
    if (await claimWorkerDead(db, peer.id, staleAfterMs)) claimed.push(peer.id);
  }
  return claimed;
}

/** Signal 0 checks for the process without touching it: ESRCH means there is none; EPERM means one runs as another user. */
export function isProcessRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
