import { sql } from 'drizzle-orm';
import type { Database } from '../client.ts';

export async function registerWorker(db: Database, worker: { id: string; hostname: string; pid: number }): Promise<void> {
  await db.execute(sql`
    insert into workers (id, hostname, pid, status) values (${worker.id}, ${worker.hostname}, ${worker.pid}, 'running')
    on conflict (id) do update set status = 'running', heartbeat_at = now(), stopped_at = null`);
}

export async function heartbeatWorker(db: Database, workerId: string): Promise<void> {
  await db.execute(sql`update workers set heartbeat_at = now() where id = ${workerId} and status in ('running', 'stopping')`);
}

export async function markWorkerStatus(db: Database, workerId: string, status: 'stopping' | 'stopped'): Promise<void> {
  await db.execute(sql`update workers set status = ${status}, stopped_at = case when ${status} = 'stopped' then now() else stopped_at end where id = ${workerId}`);
}

/**
 * Workers whose heartbeat is older than `deadAfterMs` (by the database clock)
 * are declared dead, once: the status change is the compare-and-set, so of
 * several sweepers exactly one gets each dead worker back.
 */
export async function claimDeadWorkers(db: Database, deadAfterMs: number): Promise<string[]> {
  const rows = await db.execute<{ id: string }>(sql`
    update workers set status = 'dead', stopped_at = now()
    where status in ('running', 'stopping') and heartbeat_at < now() - ${deadAfterMs}::int * interval '1 millisecond'
    returning id`);
  return rows.map((r) => r.id);
}
