import { sql } from 'drizzle-orm';
import type { Database } from '../client.ts';

export async function registerWorker(db: Database, worker: { id: string; hostname: string; pid: number }): Promise<void> {
  await db.execute(sql`
    insert into workers (id, hostname, pid, status) values (${worker.id}, ${worker.hostname}, ${worker.pid}, 'running')
    on conflict (id) do update set status = 'running', heartbeat_at = now(), stopped_at = null`);
}

/**
 * 'dead' when the row was no longer running or stopping: a peer declared this
 * worker dead (its heartbeat stalled past WORKER_DEAD_AFTER_MS) and cut off its
 * turns, so nothing it still runs is its own (docs/restarts.md "Declared dead").
 */
export async function heartbeatWorker(db: Database, workerId: string): Promise<'alive' | 'dead'> {
  const rows = await db.execute<{ id: string }>(sql`update workers set heartbeat_at = now() where id = ${workerId} and status in ('running', 'stopping') returning id`);
  return rows.length > 0 ? 'alive' : 'dead';
}

export async function markWorkerStatus(db: Database, workerId: string, status: 'stopping' | 'stopped'): Promise<void> {
  await db.execute(sql`update workers set status = ${status}, stopped_at = case when ${status} = 'stopped' then now() else stopped_at end where id = ${workerId}`);
}

/**
 * Workers whose heartbeat is older than `deadAfterMs` (by the database clock)
 * are declared dead, once: the status change is the compare-and-set, so of
 * several sweepers exactly one gets each dead worker back. Never the caller:
 * a worker that runs this sweep is alive, and declaring itself dead would cut
 * off its own running turns (issue 29).
 */
export async function claimDeadWorkers(db: Database, sweep: { deadAfterMs: number; callerId: string }): Promise<string[]> {
  const rows = await db.execute<{ id: string }>(sql`
    update workers set status = 'dead', stopped_at = now()
    where status in ('running', 'stopping') and id <> ${sweep.callerId}
      and heartbeat_at < now() - ${sweep.deadAfterMs}::int * interval '1 millisecond'
    returning id`);
  return rows.map((r) => r.id);
}

/**
 * Workers registered from `hostname` whose heartbeat is older than
 * `staleAfterMs`: the ones a worker on the same machine can check for a
 * running process (restart-guard.ts) instead of waiting `WORKER_DEAD_AFTER_MS`.
 */
export async function listStaleWorkersOnHost(db: Database, hostname: string, staleAfterMs: number): Promise<{ id: string; pid: number }[]> {
  const rows = await db.execute<{ id: string; pid: number }>(sql`
    select id, pid from workers
    where hostname = ${hostname} and status in ('running', 'stopping') and heartbeat_at < now() - ${staleAfterMs}::int * interval '1 millisecond'`);
  return rows.map((r) => ({ id: r.id, pid: Number(r.pid) }));
}

/** Declares this worker dead, once (the same compare-and-set as claimDeadWorkers), if its heartbeat is still stale. */
export async function claimWorkerDead(db: Database, workerId: string, staleAfterMs: number): Promise<boolean> {
  const rows = await db.execute<{ id: string }>(sql`
    update workers set status = 'dead', stopped_at = now()
    where id = ${workerId} and status in ('running', 'stopping') and heartbeat_at < now() - ${staleAfterMs}::int * interval '1 millisecond'
    returning id`);
  return rows.length > 0;
}
