import { sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import type { TurnStatus } from '../schema/turns.ts';

// How running turns end without a commit: settled by the next lease holder, abandoned by their own holding, or cut off by
// a restart (docs/restarts.md). Split from turn-begin.ts and turn-commit.ts, which begin and commit turns.

/** What a settled turn's row gets: `status` and `error` (core's staleTurnEndings). */
export interface TurnEnding {
  status: Extract<TurnStatus, 'failed' | 'interrupted'>;
  error: string;
}

/**
 * Core's stale-turn rule (staleTurnRule, docs/restarts.md "Counting"): a
 * turn's worker is alive only with `liveStatus` and a heartbeat at most
 * `maxHeartbeatAgeMs` old; a live worker's turn is superseded, any other is
 * cut off and counted.
 */
export interface StaleTurnRule {
  liveStatus: string;
  maxHeartbeatAgeMs: number;
  cutOff: TurnEnding;
  superseded: TurnEnding;
}

/**
 * Ends the running turn that the new lease holder found (docs/restarts.md). Its
 * worker is either dead (no heartbeat within the rule's bound, or no row) or
 * stopping (a graceful stop releases a cut-off turn's lease before it records
 * the cut): the turn was cut off by a restart and counts one; or running and
 * alive: it lost the lease (a Redis restart or failover) and is superseded,
 * which is no restart, and its commit is now refused (commitTurn's fence).
 * The decision is core's judgeStaleTurn, kept in this one statement with its
 * parameters so that it is atomic. Only a lease holder calls this.
 */
export async function settleRunningTurn(db: Database, conversationId: number, rule: StaleTurnRule): Promise<{ cutOff: number; superseded: number }> {
  const [row] = await db.$client<{ cut_off: string; superseded: string }[]>`
    with running as materialized (
      select t.id, coalesce(w.status = ${rule.liveStatus} and w.heartbeat_at >= now() - ${rule.maxHeartbeatAgeMs}::int * interval '1 millisecond', false) as alive
      from turns t left join workers w on w.id = t.worker_id
      where t.conversation_id = ${conversationId} and t.status = 'running'
      for update of t
    ), superseded as (
      update turns set status = ${rule.superseded.status}, error = ${rule.superseded.error}, ended_at = now()
      where id in (select id from running where alive) returning id
    ), cut as (
      update turns set status = ${rule.cutOff.status}, error = ${rule.cutOff.error}, cut_off_at = now(), ended_at = now()
      where id in (select id from running where not alive) returning id, session_id
    ), owed as (
      -- The resume note is owed from the cut-off until a request carrying it is accepted (docs/restarts.md, "Resume once").
      update sessions set resume_owed = true
      where id in (select session_id from cut) or parent_session_id in (select session_id from cut) returning id
    ), counted as (
      update conversations set restart_count = restart_count + 1, updated_at = now()
      where id = ${conversationId} and exists (select 1 from cut) returning id
    )
    select (select count(*) from cut) as cut_off, (select count(*) from superseded) as superseded`;
  return { cutOff: Number(row?.cut_off ?? 0), superseded: Number(row?.superseded ?? 0) };
}

/**
 * Ends this worker's own running turn without committing anything, when it
 * learned that it lost the conversation's lease: no restart happened, the
 * input stays pending for the new holder. Fenced like a commit: a turn that
 * is no longer running is left as it is.
 */
export async function abandonTurn(db: Database, turnId: number, reason: string): Promise<void> {
  await db.$client`update turns set status = 'interrupted', error = ${reason}, ended_at = now() where id = ${turnId} and status = 'running'`;
}

/**
 * Ends running turns that a restart cut off — those of one conversation, or
 * of one worker (graceful stop, or found dead by its heartbeat) — and counts
 * one restart for each affected conversation (docs/restarts.md). Their input stays
 * pending, so the next turn resumes it. Returns the affected conversations.
 * Core's judgeStaleTurn cuts off the turns of every worker that is not
 * running (stopping, dead), so these callers need no liveness check; they
 * pass the ending it writes (staleTurnRule's `cutOff`).
 */
export async function cutOffRunningTurns(db: Database, where: { conversationId?: number; workerId?: string; deadWorkers?: true }, ending: TurnEnding): Promise<number[]> {
  const filter =
    where.conversationId !== undefined
      ? sql`conversation_id = ${where.conversationId}`
      : where.deadWorkers
        ? sql`worker_id in (select id from workers where status = 'dead')`
        : sql`worker_id = ${where.workerId ?? ''}`;
  const rows = await db.execute<{ conversation_id: string }>(sql`
    with cut as (
      update turns set status = ${ending.status}, error = ${ending.error}, cut_off_at = now(), ended_at = now()
      where status = 'running' and ${filter}
      returning conversation_id, session_id
    ), owed as (
      -- The resume note is owed from the cut-off until a request carrying it is accepted (docs/restarts.md, "Resume once").
      update sessions set resume_owed = true
      where id in (select session_id from cut) or parent_session_id in (select session_id from cut) returning id
    )
    update conversations c set restart_count = c.restart_count + 1, updated_at = now()
    from (select distinct conversation_id from cut) x
    where c.id = x.conversation_id
    returning c.id as conversation_id`);
  return rows.map((r) => Number(r.conversation_id));
}
