import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { claimDeadWorkers, heartbeatWorker, registerWorker } from './worker-registry.ts';

// Issue 29, defect 3: a worker declared dead kept running as a zombie.
const db = useTestDbClient({ max: 2 });

async function registerSilent(id: string, silentForMs: number): Promise<void> {
  await registerWorker(db.client.db, { id, hostname: 'test-host', pid: 1 });
  await db.client.db.execute(sql`update workers set heartbeat_at = now() - ${silentForMs}::int * interval '1 millisecond' where id = ${id}`);
}

describe('worker registry', () => {
  describe('claimDeadWorkers', () => {
    it('never declares the calling worker dead, even when its own heartbeat is stale', async () => {
      await registerSilent('caller', 60_000);
      await registerSilent('peer', 60_000);

      const claimed = await claimDeadWorkers(db.client.db, { deadAfterMs: 1_000, callerId: 'caller' });

      expect(claimed).toEqual(['peer']);
      const rows = await db.client.db.execute<{ id: string; status: string }>(sql`select id, status from workers where id in ('caller', 'peer') order by id`);
      expect(rows.map((r) => [r.id, r.status])).toEqual([['caller', 'running'], ['peer', 'dead']]);
    });
  });

  describe('heartbeatWorker', () => {
    it('tells a worker declared dead that it is dead, and leaves its row dead', async () => {
      await registerSilent('stalled', 60_000);
      await registerWorker(db.client.db, { id: 'sweeper', hostname: 'test-host', pid: 2 });
      expect(await claimDeadWorkers(db.client.db, { deadAfterMs: 1_000, callerId: 'sweeper' })).toContain('stalled');

      expect(await heartbeatWorker(db.client.db, 'stalled')).toBe('dead');
      expect(await heartbeatWorker(db.client.db, 'sweeper')).toBe('alive');
      const [row] = await db.client.db.execute<{ status: string }>(sql`select status from workers where id = 'stalled'`);
      expect(row?.status).toBe('dead');
    });
  });
});
