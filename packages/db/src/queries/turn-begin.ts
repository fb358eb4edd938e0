import type { Database } from '../client.ts';

export type BeginTurnResult =
  /** The turn is running: it alone may commit the input it took (see commitTurn). */
  | { kind: 'begun'; turnId: number }
  /** Another turn of the conversation is still running (the partial unique index said so): settle it first. */
  | { kind: 'occupied' }
  /** The conversation reached the restart threshold, or as many runtime crashes in a row: suspend it, never start a turn on it (docs/restarts.md, docs/codex.md). */
  | { kind: 'restart_loop' }
  /** The user of the turn's first input already runs USER_MAX_RUNNING_TURNS turns: defer it, its input stays pending. */
  | { kind: 'user_busy' }
  /** This worker was declared dead (it stalled): it begins nothing, and exits at its next heartbeat (docs/restarts.md). */
  | { kind: 'declared_dead' };

const uniqueViolation = '23505';

export interface BeginTurnInput {
  conversationId: number;
  sessionId: number;
  workerId: string;
  /** The restart count from which no turn begins (core's restartLoopStartsAt). */
  suspendThreshold: number;
  /** The first input event the turn takes: its user is the one the turn counts against. */
  firstInputEventId: number;
  /** USER_MAX_RUNNING_TURNS. */
  maxRunningPerUser: number;
}

/**
 * Inserts the running turn, from the moment a worker starts working on the
 * input (compression included), so a crash at any point of the turn is seen
 * and counted (issue 16, defect 4). The same statement refuses a turn on a
 * conversation at or past the restart threshold (defect 7; its runtime crash
 * streak counts against the same threshold), and the partial
 * unique index refuses a second running turn. Expected refusals are values.
 *
 * It also holds the user's turns to `maxRunningPerUser` (issue 17, defect 3),
 * exactly, across workers: the turn takes the lowest of the user's slots
 * 1..max that no running turn holds, and the unique index on (user, slot)
 * among running turns makes two workers that picked the same slot at once
 * wait for each other; the loser inserts nothing (`on conflict do nothing`)
 * and tries again, now seeing the winner's row, until it gets a slot or
 * none is free (`user_busy`). A count then an insert would let every racer
 * through: each statement sees the others' rows only once committed.
 *
 * On every turn's path: a postgres.js statement, prepared once per connection.
 */
export async function beginTurn(db: Database, input: BeginTurnInput): Promise<BeginTurnResult> {
  // Each lost race means another turn of the user took a slot, so there are at most max - 1 retries.
  for (let attempt = 0; ; attempt++) {
    const result = await tryBeginTurn(db, input);
    if (result !== 'slot_taken') return result;
    if (attempt >= input.maxRunningPerUser) return { kind: 'user_busy' };
  }
}

/**
 * `me`: a worker declared dead begins nothing (issue 29: a stalled worker woke
 * and began a turn after its turns were cut off, and the turn stayed running
 * forever); no row (a test's made-up id) is no objection. Not locked: a lock
 * on the worker's row for every begin would queue its heartbeat behind its
 * turns. A begin that raced the declaration itself is cut off by the next
 * sweep (cutOffTurnsOfDeadWorkers). (Comments stay out of the SQL:
 * pg_stat_activity shows only the first 1,024 bytes of a statement.)
 */
async function tryBeginTurn(db: Database, input: BeginTurnInput): Promise<BeginTurnResult | 'slot_taken'> {
  try {
    const [row] = await db.$client<{ id: string | null; allowed: boolean; slot: number | null; worker_dead: boolean }[]>`
      with me as materialized (
        select status = 'dead' as dead from workers where id = ${input.workerId}
      ), conv as materialized (
        select restart_count < ${input.suspendThreshold} and runtime_crash_streak < ${input.suspendThreshold} as allowed from conversations where id = ${input.conversationId}
      ), owner as materialized (
        -- The turn's user as platform:account:user; loadTurnState spells the same key (turn-state.test.ts checks they agree).
        select (select e.platform || ':' || e.account_id || ':' || e.user_id from inbound_events e where e.id = ${input.firstInputEventId}) as user_key
      ), slot as materialized (
        select min(s) as s from owner, generate_series(1, ${input.maxRunningPerUser}::int) s
        where not exists (select 1 from turns t where t.user_key = owner.user_key and t.status = 'running' and t.user_slot = s)
      ), ins as (
        insert into turns (conversation_id, session_id, worker_id, status, user_key, user_slot)
        select ${input.conversationId}, ${input.sessionId}, ${input.workerId}, 'running', owner.user_key, slot.s
        from conv, owner, slot where conv.allowed and slot.s is not null and not exists (select 1 from me where dead)
        on conflict (user_key, user_slot) where status = 'running' do nothing
        returning id
      )
      select (select id from ins) as id, coalesce((select allowed from conv), false) as allowed, (select s from slot) as slot,
        exists (select 1 from me where dead) as worker_dead`;
    if (row?.worker_dead) return { kind: 'declared_dead' };
    if (!row?.allowed) return { kind: 'restart_loop' };
    if (row.id !== null) return { kind: 'begun', turnId: Number(row.id) };
    // A free slot was seen but another turn of the user took it first; null: every slot is held.
    return row.slot !== null ? 'slot_taken' : { kind: 'user_busy' };
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code !== uniqueViolation && (error as { code?: string }).code !== uniqueViolation) throw error;
    return { kind: 'occupied' };
  }
}
