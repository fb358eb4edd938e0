import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { conversations } from '../schema/conversations.ts';
import { inboundEvents } from '../schema/inbound-events.ts';
import type { StoredToolCall } from '../schema/messages.ts';
import { sessions } from '../schema/sessions.ts';
import type { TurnStatus } from '../schema/turns.ts';
import { outboxClaimMs } from './outbox-store.ts';
import { toMessage, toOutbox, type ConversationRow, type InboundEventRow, type JsonRow, type MessageRow, type OutboxRow } from './table-rows.ts';

export async function loadConversation(db: Database, conversationId: number): Promise<ConversationRow | undefined> {
  const [row] = await db.select().from(conversations).where(eq(conversations.id, conversationId));
  return row;
}

/**
 * Returns the conversation's current session, creating the first one if it
 * has none. The pointer is set by compare-and-set, so two callers can never
 * give one conversation two first sessions.
 */
export async function ensureCurrentSession(db: Database, conversation: ConversationRow): Promise<number> {
  if (conversation.currentSessionId !== null) return conversation.currentSessionId;
  return db.transaction(async (tx) => {
    const [created] = await tx.insert(sessions).values({ conversationId: conversation.id }).returning({ id: sessions.id });
    if (!created) throw new Error('session insert returned nothing');
    const moved = await tx
      .update(conversations)
      .set({ currentSessionId: created.id })
      .where(and(eq(conversations.id, conversation.id), isNull(conversations.currentSessionId)))
      .returning({ id: conversations.id });
    if (moved.length === 1) return created.id;
    tx.rollback();
    return 0;
  }).catch(async (error: unknown) => {
    const again = await loadConversation(db, conversation.id);
    if (again?.currentSessionId) return again.currentSessionId;
    throw error;
  });
}

export async function loadPendingInbound(db: Database, conversationId: number, limit: number): Promise<InboundEventRow[]> {
  return db
    .select()
    .from(inboundEvents)
    .where(and(eq(inboundEvents.conversationId, conversationId), eq(inboundEvents.status, 'pending')))
    .orderBy(asc(inboundEvents.id))
    .limit(limit);
}

/**
 * A session's messages in order, or only those after `afterSeq` (the history
 * cache's top-up). One JSON value mapped by the schema (table-rows.ts): a
 * prepared postgres.js statement, and far less per-row work than drizzle's
 * row mapping, which dominated reads of long sessions.
 */
export async function loadSessionMessages(db: Database, sessionId: number, afterSeq = 0): Promise<MessageRow[]> {
  const [row] = await db.$client<{ rows: JsonRow[] }[]>`
    select coalesce(json_agg(m order by m.seq), '[]') as rows
    from messages m where m.session_id = ${sessionId} and m.seq > ${afterSeq}`;
  return (row?.rows ?? []).map(toMessage);
}

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

export interface NewTranscriptMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  tokens: number;
  toolCalls?: StoredToolCall[];
  toolCallId?: string;
  toolName?: string;
  inboundEventId?: number;
}

export interface CommitTurnInput {
  /** Absent for a chat command, which consumes its event and replies without a turn. */
  turnId?: number;
  conversationId: number;
  sessionId: number;
  status: Exclude<TurnStatus, 'queued' | 'running'>;
  error?: string;
  /** The inbound events this turn consumed. */
  inboundEventIds: number[];
  messages: NewTranscriptMessage[];
  /** Reply parts, in order, delivered after commit. */
  replies: { platform: string; target: Record<string, unknown>; chunks: string[] }[];
  /** The holding (outboxClaimId) that will send the reply parts: they are inserted already claimed by it (claimOutboxRow). */
  claimFor?: string;
  /**
   * A cancelled turn's /stop event, still pending for its command: it is
   * stamped with this turn's id in the same statement, so whichever worker
   * answers the /stop says "Stopped.", even after this one died.
   */
  stoppedByEventId?: number;
  /**
   * The runtime's thread this turn ran in (a Codex thread), kept on the
   * session so the next turn, on any worker, continues it. Written only under
   * the fence: a superseded turn never moves the session to its thread.
   */
  runtimeThreadId?: string;
  /**
   * The runtime's thread received this turn's input (Codex answered
   * `turn/start`): `sessions.runtime_synced_seq` moves to the session's new
   * last seq in the same fenced update, so the next turn carries nothing it
   * already has. Absent: the thread may have missed the input, the next turn
   * on it carries it (docs/codex.md, "Threads").
   */
  runtimeSynced?: boolean;
  /** The model that answered (or last failed), stored as `turns.model`; absent for a runtime without one. */
  model?: string;
  /** What the turn does to `conversations.runtime_crash_streak` (core crashStreakChangeOf); absent: nothing. */
  crashStreak?: 'increment' | 'reset' | 'keep';
}

export type CommitTurnResult =
  /** `crashStreak`: the conversation's runtime crash streak after this commit (null when the commit did not touch it). */
  | { kind: 'committed'; outbox: OutboxRow[]; messages: MessageRow[]; crashStreak: number | null }
  /**
   * Nothing was written: the turn is no longer running (cut off, or
   * superseded by a new lease holder), or its input was already taken by
   * someone else. The caller lost the conversation and must send nothing.
   */
  | { kind: 'stale' };

/**
 * Writes everything a turn produced atomically, in one transaction: the transcript
 * entries with consecutive per-session sequence numbers, the consumed inbound
 * events marked done, the outbox rows, and the turn's end. Returns the
 * conversation's pending outbox rows, so delivery needs no second read.
 *
 * Fenced (issue 16, defect 2): the `fence` part locks the turn row and the
 * input rows and holds only if the turn is still `running`, not cut off, its
 * session is still the conversation's current one (an operator's reset,
 * suspend or resume moved it: issue 20), and every input event is still
 * `pending`; every write hangs off it. A holder
 * that lost its lease therefore commits nothing, whatever the timing: if the
 * new holder settled its turn or took its input first, the row locks make this
 * statement wait and see that (a locked row is re-checked once it is free).
 *
 * One statement of data-modifying CTEs rather than a transaction of seven,
 * because it runs on every turn and each round trip is paid in reply latency;
 * written for postgres.js directly (not drizzle's `execute`), because only
 * postgres.js prepares it once per connection instead of planning it anew
 * every turn (drizzle sends unnamed queries unprepared).
 */
export async function commitTurn(db: Database, input: CommitTurnInput): Promise<CommitTurnResult> {
  const tokens = input.messages.reduce((sum, m) => sum + m.tokens, 0);
  const messageRows = input.messages.map((m, i) => ({
    ord: i + 1,
    role: m.role,
    content: m.content,
    tokens: m.tokens,
    tool_calls: m.toolCalls ?? null,
    tool_call_id: m.toolCallId ?? null,
    tool_name: m.toolName ?? null,
    inbound_event_id: m.inboundEventId ?? null,
  }));
  const outboxRows = input.replies
    .flatMap((reply) => reply.chunks.map((text, chunk_index) => ({ platform: reply.platform, target: reply.target, chunk_index, text })))
    .map((row, index) => ({ ...row, ord: index + 1 }));
  const count = input.messages.length;
  const turnId = input.turnId ?? null;
  const eventIds = `{${input.inboundEventIds.join(',')}}`;
  const threadId = input.runtimeThreadId ?? null;
  const synced = input.runtimeSynced === true;
  const crash = input.crashStreak === 'keep' ? null : (input.crashStreak ?? null);
  const [row] = await db.$client<{ fenced: boolean; outbox: JsonRow[] | null; messages: JsonRow[] | null; crash_streak: number | null }[]>`
    with turn_ok as materialized (
      -- The conversation row is locked after the turn row, in the order an operator's action takes them (fenceRunningTurns).
      select t.id from turns t join conversations c on c.id = t.conversation_id
      where t.id = ${turnId} and t.status = 'running' and t.cut_off_at is null and c.current_session_id = ${input.sessionId}
      for update of t for no key update of c
    ), input_ok as materialized (
      select id from inbound_events where id = any(${eventIds}::bigint[]) and status = 'pending' for update
    ), fence as materialized (
      select 1 as ok where (${turnId}::bigint is null or exists (select 1 from turn_ok))
        and (select count(*) from input_ok) = cardinality(${eventIds}::bigint[])
    ), s as (
      -- One update of the session row (a statement may change a row once): the sequence and the runtime's thread.
      update sessions set last_seq = last_seq + ${count}, message_count = message_count + ${count}, token_estimate = token_estimate + ${tokens},
        runtime_thread_id = coalesce(${threadId}::text, runtime_thread_id),
        runtime_synced_seq = case when ${synced}::boolean then last_seq + ${count} else runtime_synced_seq end
      where id = ${input.sessionId} and (${count}::int > 0 or ${threadId}::text is not null) and exists (select 1 from fence)
      returning last_seq
    ), m as (
      insert into messages (session_id, seq, role, content, tokens, tool_calls, tool_call_id, tool_name, inbound_event_id, turn_id)
      select ${input.sessionId}, s.last_seq - ${count} + r.ord, r.role, r.content, r.tokens, r.tool_calls, r.tool_call_id, r.tool_name, r.inbound_event_id, ${turnId}
      from s, jsonb_to_recordset(${JSON.stringify(messageRows)}::jsonb)
        as r(ord int, role text, content text, tokens int, tool_calls jsonb, tool_call_id text, tool_name text, inbound_event_id bigint)
      returning *
    ), e as (
      update inbound_events set status = 'done', turn_id = ${turnId} where id in (select id from input_ok) and exists (select 1 from fence)
      returning 1
    ), stop_event as (
      update inbound_events set turn_id = ${turnId} where id = ${input.stoppedByEventId ?? null}::bigint and status = 'pending' and exists (select 1 from fence)
      returning 1
    ), c as (
      -- Input was taken, so the queue is below its cap again and a later overflow is told anew.
      -- The runtime crash streak moves in the same update (docs/codex.md, "Crashes and suspension").
      update conversations set updated_at = now(),
        input_overflow_at = case when cardinality(${eventIds}::bigint[]) > 0 then null else input_overflow_at end,
        runtime_crash_streak = case ${crash}::text when 'increment' then runtime_crash_streak + 1 when 'reset' then 0 else runtime_crash_streak end,
        -- A completed turn ends the run of cut-offs: only consecutive ones count (docs/restarts.md "Counting"), whether or not its reply is ever delivered.
        -- A turn, not a chat command (no turn id: a /stop's "Nothing was running." answers nothing of the agent's).
        restart_count = case when ${input.status}::text = 'completed' and ${turnId}::bigint is not null then 0 else restart_count end
      where id = ${input.conversationId} and (cardinality(${eventIds}::bigint[]) > 0 or ${crash}::text is not null) and exists (select 1 from fence)
      returning runtime_crash_streak
    ), st as (
      -- The conversation's growing message (a streamed reply, docs/turns.md "Streaming replies") becomes the first
      -- part: delivery edits it to its final text instead of posting the reply again.
      update outbox set status = 'pending', turn_id = ${turnId}, chunk_index = 0, next_attempt_at = now(),
        text = (select r.text from jsonb_to_recordset(${JSON.stringify(outboxRows)}::jsonb) as r(ord int, text text) where r.ord = 1),
        -- A step of another holding's stream still in flight (a superseded turn's edit) keeps its claim: delivery
        -- waits for it to end, so the final text is the last edit the user sees (docs/turns.md "Streaming replies").
        claimed_by = case when outbox.claimed_until > now() and outbox.claimed_by is distinct from ${input.claimFor ?? null}::text then outbox.claimed_by
          else ${input.claimFor ?? null}::text end,
        claimed_until = case when outbox.claimed_until > now() and outbox.claimed_by is distinct from ${input.claimFor ?? null}::text then outbox.claimed_until
          when ${input.claimFor ?? null}::text is null then null else now() + ${outboxClaimMs}::int * interval '1 millisecond' end
      -- Only a turn takes it over: a chat command's reply is its own message, the growing one waits for the turn that answers it.
      where conversation_id = ${input.conversationId} and status = 'streaming' and ${turnId}::bigint is not null and ${outboxRows.length}::int > 0
        and exists (select 1 from fence)
      returning *
    ), o as (
      insert into outbox (conversation_id, turn_id, platform, target, chunk_index, text, claimed_by, claimed_until)
      select ${input.conversationId}, ${turnId}, r.platform, r.target, r.chunk_index, r.text,
        ${input.claimFor ?? null}::text, case when ${input.claimFor ?? null}::text is null then null else now() + ${outboxClaimMs}::int * interval '1 millisecond' end
      from jsonb_to_recordset(${JSON.stringify(outboxRows)}::jsonb) as r(ord int, platform text, target jsonb, chunk_index int, text text)
      where exists (select 1 from fence) and not (r.ord = 1 and exists (select 1 from st))
      returning *
    ), t as (
      -- The turn's session is the one it committed to (a compression during the turn moved it to the child).
      update turns set status = ${input.status}, error = ${input.error ?? null}, session_id = ${input.sessionId}, ended_at = now(), model = ${input.model ?? null}::text
      where id in (select id from turn_ok) and exists (select 1 from fence)
      returning 1
    )
    select exists (select 1 from fence) as fenced,
    -- Everything now waiting to go out, in order: earlier notices (from the statement's snapshot) and this turn's parts.
    coalesce((select json_agg(x order by x.id) from (
      select * from outbox where conversation_id = ${input.conversationId} and status = 'pending'
      union all select * from st union all select * from o
    ) x), '[]') as outbox,
    -- The stored transcript rows, so the worker's history cache takes them without reading them back.
    (select json_agg(m order by m.seq) from m) as messages,
    case when ${crash}::text is null then null else (select runtime_crash_streak from c) end as crash_streak`;
  if (!row?.fenced) return { kind: 'stale' };
  const crashStreak = row.crash_streak === null ? null : Number(row.crash_streak);
  return { kind: 'committed', outbox: (row.outbox ?? []).map(toOutbox), messages: (row.messages ?? []).map(toMessage), crashStreak };
}
