import type { Database } from '../client.ts';

// What the gateway reads to tell how the system is: /readyz and the metrics
// scrape. Their callers bound each read with a timeout of their own.

/** The cheapest statement: resolves once Postgres answers. */
export async function pingDatabase(db: Database): Promise<void> {
  await db.$client`select 1`;
}

/** Cluster-wide counts the gateway's metrics read on scrape. */
export interface ClusterFigures {
  /** Turns running now. */
  running: number;
  /** Conversations suspended by the restart rules. */
  suspended: number;
  /** Conversations with stored input no turn has taken yet. */
  waiting: number;
}

/** One statement, three counts: a scrape costs one round trip. */
export async function loadClusterFigures(db: Database): Promise<ClusterFigures | undefined> {
  const [row] = await db.$client<ClusterFigures[]>`
    select (select count(*)::int from turns where status = 'running') as running,
           (select count(*)::int from conversations where status = 'suspended') as suspended,
           (select count(distinct conversation_id)::int from inbound_events where status = 'pending') as waiting`;
  return row;
}
