import type postgres from 'postgres';
import type { Database } from '../client.ts';
import type { StoredToolCall } from '../schema/messages.ts';
import type { OutboxButton } from '../schema/outbox.ts';
import type { TurnStatus } from '../schema/turns.ts';
import { outboxClaimMs } from './outbox-store.ts';
import { toMessage, toOutbox, type JsonRow, type MessageRow, type OutboxRow } from './table-rows.ts';

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
  /** Reply parts, in order, delivered after commit; `buttons` go under the reply's last part. */
  replies: { platform: string; target: Record<string, unknown>; chunks: string[]; buttons?: OutboxButton[] }[];
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

/** The input and what the statement computes from it, each computed once. */
interface CommitParams {
  input: CommitTurnInput;
  turnId: number | null;
  /** The consumed inbound events' ids as a Postgres array literal. */
  eventIds: string;
  /** How many transcript messages the turn adds, and their tokens. */
  count: number;
  tokens: number;
  threadId: string | null;
  synced: boolean;
  crash: 'increment' | 'reset' | null;
  /** The transcript messages and the reply parts as JSON, for `jsonb_to_recordset`. */
  messageRows: string;
  outboxRows: string;
  outboxCount: number;
}

type Fragment = postgres.PendingQuery<postgres.Row[]>;

function transcriptRowsOf(messages: NewTranscriptMessage[]): Record<string, unknown>[] {
  return messages.map((m, i) => ({
    ord: i + 1,
    role: m.role,
    content: m.content,
    tokens: m.tokens,
    tool_calls: m.toolCalls ?? null,
    tool_call_id: m.toolCallId ?? null,
    tool_name: m.toolName ?? null,
    inbound_event_id: m.inboundEventId ?? null,
  }));
}

/** One row per reply part, numbered across the replies: part 1 may take over the conversation's growing message. */
function outboxRowsOf(replies: CommitTurnInput['replies']): Record<string, unknown>[] {
  return replies
    .flatMap((reply) =>
      reply.chunks.map((text, chunk_index) => ({
        platform: reply.platform,
        target: reply.target,
        chunk_index,
        text,
        // Absent, not null: the row's column stays SQL NULL.
        ...(chunk_index === reply.chunks.length - 1 && reply.buttons && reply.buttons.length > 0 ? { buttons: reply.buttons } : {}),
      })),
    )
    .map((row, index) => ({ ...row, ord: index + 1 }));
}

function commitParamsOf(input: CommitTurnInput): CommitParams {
  const outboxRows = outboxRowsOf(input.replies);
  return {
    input,
    turnId: input.turnId ?? null,
    eventIds: `{${input.inboundEventIds.join(',')}}`,
    count: input.messages.length,
    tokens: input.messages.reduce((sum, m) => sum + m.tokens, 0),
    threadId: input.runtimeThreadId ?? null,
    synced: input.runtimeSynced === true,
    crash: input.crashStreak === 'keep' ? null : (input.crashStreak ?? null),
    messageRows: JSON.stringify(transcriptRowsOf(input.messages)),
    outboxRows: JSON.stringify(outboxRows),
    outboxCount: outboxRows.length,
  };
}

// The statement's parts, in its order. Each is a postgres.js fragment, which postgres.js joins into the one
// statement's text, so the text (prepared once per connection, counted by the statement budget) is one string.

/** The fence: the turn row and the input rows locked, and whether the turn still holds them. */
function fenceClauses(sql: postgres.Sql, p: CommitParams): Fragment {
  const { input } = p;
  return sql`turn_ok as materialized (
      -- The conversation row is locked after the turn row, in the order an operator's action takes them (fenceRunningTurns).
      select t.id from turns t join conversations c on c.id = t.conversation_id
      where t.id = ${p.turnId} and t.status = 'running' and t.cut_off_at is null and c.current_session_id = ${input.sessionId}
      for update of t for no key update of c
    ), input_ok as materialized (
      select id from inbound_events where id = any(${p.eventIds}::bigint[]) and status = 'pending' for update
    ), fence as materialized (
      select 1 as ok where (${p.turnId}::bigint is null or exists (select 1 from turn_ok))
        and (select count(*) from input_ok) = cardinality(${p.eventIds}::bigint[])
    )`;
}

/** The session's sequence and thread, the transcript messages, the input marked done, a pending /stop stamped. */
function transcriptClauses(sql: postgres.Sql, p: CommitParams): Fragment {
  const { input } = p;
  return sql`s as (
      -- One update of the session row (a statement may change a row once): the sequence and the runtime's thread.
      update sessions set last_seq = last_seq + ${p.count}, message_count = message_count + ${p.count}, token_estimate = token_estimate + ${p.tokens},
        runtime_thread_id = coalesce(${p.threadId}::text, runtime_thread_id),
        runtime_synced_seq = case when ${p.synced}::boolean then last_seq + ${p.count} else runtime_synced_seq end
      where id = ${input.sessionId} and (${p.count}::int > 0 or ${p.threadId}::text is not null) and exists (select 1 from fence)
      returning last_seq
    ), m as (
      insert into messages (session_id, seq, role, content, tokens, tool_calls, tool_call_id, tool_name, inbound_event_id, turn_id)
      select ${input.sessionId}, s.last_seq - ${p.count} + r.ord, r.role, r.content, r.tokens, r.tool_calls, r.tool_call_id, r.tool_name, r.inbound_event_id, ${p.turnId}
      from s, jsonb_to_recordset(${p.messageRows}::jsonb)
        as r(ord int, role text, content text, tokens int, tool_calls jsonb, tool_call_id text, tool_name text, inbound_event_id bigint)
      returning *
    ), e as (
      update inbound_events set status = 'done', turn_id = ${p.turnId} where id in (select id from input_ok) and exists (select 1 from fence)
      returning 1
    ), stop_event as (
      update inbound_events set turn_id = ${p.turnId} where id = ${input.stoppedByEventId ?? null}::bigint and status = 'pending' and exists (select 1 from fence)
      returning 1
    )`;
}

/** The conversation: input overflow cleared, the runtime crash streak moved, the restart count ended by a completed turn. */
function conversationClause(sql: postgres.Sql, p: CommitParams): Fragment {
  const { input } = p;
  return sql`c as (
      -- Input was taken, so the queue is below its cap again and a later overflow is told anew.
      -- The runtime crash streak moves in the same update (docs/codex.md, "Crashes and suspension").
      update conversations set updated_at = now(),
        input_overflow_at = case when cardinality(${p.eventIds}::bigint[]) > 0 then null else input_overflow_at end,
        runtime_crash_streak = case ${p.crash}::text when 'increment' then runtime_crash_streak + 1 when 'reset' then 0 else runtime_crash_streak end,
        -- A completed turn ends the run of cut-offs: only consecutive ones count (docs/restarts.md "Counting"), whether or not its reply is ever delivered.
        -- A turn, not a chat command (no turn id: a /stop's "Nothing was running." answers nothing of the agent's).
        restart_count = case when ${input.status}::text = 'completed' and ${p.turnId}::bigint is not null then 0 else restart_count end
      where id = ${input.conversationId} and (cardinality(${p.eventIds}::bigint[]) > 0 or ${p.crash}::text is not null) and exists (select 1 from fence)
      returning runtime_crash_streak
    )`;
}

/** The reply parts: the first takes over the conversation's growing message, if there is one; the rest are inserted. */
function outboxClauses(sql: postgres.Sql, p: CommitParams): Fragment {
  const { input } = p;
  return sql`st as (
      -- The conversation's growing message (a streamed reply, docs/turns.md "Streaming replies") becomes the first
      -- part: delivery edits it to its final text instead of posting the reply again.
      update outbox set status = 'pending', turn_id = ${p.turnId}, chunk_index = 0, next_attempt_at = now(),
        text = (select r.text from jsonb_to_recordset(${p.outboxRows}::jsonb) as r(ord int, text text) where r.ord = 1),
        -- A step of another holding's stream still in flight (a superseded turn's edit) keeps its claim: delivery
        -- waits for it to end, so the final text is the last edit the user sees (docs/turns.md "Streaming replies").
        claimed_by = case when outbox.claimed_until > now() and outbox.claimed_by is distinct from ${input.claimFor ?? null}::text then outbox.claimed_by
          else ${input.claimFor ?? null}::text end,
        claimed_until = case when outbox.claimed_until > now() and outbox.claimed_by is distinct from ${input.claimFor ?? null}::text then outbox.claimed_until
          when ${input.claimFor ?? null}::text is null then null else now() + ${outboxClaimMs}::int * interval '1 millisecond' end
      -- Only a turn takes it over: a chat command's reply is its own message, the growing one waits for the turn that answers it.
      where conversation_id = ${input.conversationId} and status = 'streaming' and ${p.turnId}::bigint is not null and ${p.outboxCount}::int > 0
        and exists (select 1 from fence)
      returning *
    ), o as (
      insert into outbox (conversation_id, turn_id, platform, target, chunk_index, text, buttons, claimed_by, claimed_until)
      select ${input.conversationId}, ${p.turnId}, r.platform, r.target, r.chunk_index, r.text, r.buttons,
        ${input.claimFor ?? null}::text, case when ${input.claimFor ?? null}::text is null then null else now() + ${outboxClaimMs}::int * interval '1 millisecond' end
      from jsonb_to_recordset(${p.outboxRows}::jsonb) as r(ord int, platform text, target jsonb, chunk_index int, text text, buttons jsonb)
      where exists (select 1 from fence) and not (r.ord = 1 and exists (select 1 from st))
      returning *
    )`;
}

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
  const sql = db.$client;
  const p = commitParamsOf(input);
  const [row] = await sql<{ fenced: boolean; outbox: JsonRow[] | null; messages: JsonRow[] | null; crash_streak: number | null }[]>`
    with ${fenceClauses(sql, p)}, ${transcriptClauses(sql, p)}, ${conversationClause(sql, p)}, ${outboxClauses(sql, p)}, t as (
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
    case when ${p.crash}::text is null then null else (select runtime_crash_streak from c) end as crash_streak`;
  if (!row?.fenced) return { kind: 'stale' };
  const crashStreak = row.crash_streak === null ? null : Number(row.crash_streak);
  return { kind: 'committed', outbox: (row.outbox ?? []).map(toOutbox), messages: (row.messages ?? []).map(toMessage), crashStreak };
}
