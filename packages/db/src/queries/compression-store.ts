import { sql } from 'drizzle-orm';
import { sessionClientOf, type Database } from '../client.ts';
import { AdvisoryLock } from '../lock-ids.ts';
import type { MessageRow } from './table-rows.ts';

/**
 * One bigint key per session: the namespace in the high 32 bits, XORed with
 * the session id. (The two-int4 form of the lock functions would overflow
 * once session ids pass 2^31.)
 */
function compressionLockKey(sessionId: number): string {
  return ((BigInt(AdvisoryLock.CompressSession) << 32n) ^ BigInt(sessionId)).toString();
}

export interface SessionLock {
  /** False when another process holds the lock: do not compress, do not wait. */
  acquired: boolean;
  release(): Promise<void>;
}

/**
 * `pg_try_advisory_lock` on the session, on a connection reserved for it
 * (docs/compression.md): if this process dies mid-compression its connection closes and
 * the lock goes with it, with no TTL to wait out.
 */
export async function tryLockSessionForCompression(db: Database, sessionId: number): Promise<SessionLock> {
  const reserved = await sessionClientOf(db).reserve();
  try {
    const [row] = await reserved<{ locked: boolean }[]>`select pg_try_advisory_lock(${compressionLockKey(sessionId)}::bigint) as locked`;
    if (!row?.locked) {
      reserved.release();
      return { acquired: false, release: async () => undefined };
    }
    return {
      acquired: true,
      async release() {
        try {
          await reserved`select pg_advisory_unlock(${compressionLockKey(sessionId)}::bigint)`;
        } finally {
          reserved.release();
        }
      },
    };
  } catch (error) {
    reserved.release();
    throw error;
  }
}

/** The columns compression reads: planning (role, tokens, tool calls), the tool tail, the summariser's transcript, the commit's ids. */
export type CompressionSourceMessage = Pick<MessageRow, 'id' | 'seq' | 'role' | 'kind' | 'content' | 'toolCalls' | 'toolCallId' | 'toolName' | 'tokens'>;

/**
 * A session's messages in order, for compression. Not `loadSessionMessages`:
 * a 200k-token session is ~7,000 rows, and mapping every column of each row
 * through drizzle (timestamps to Dates, ids, unused columns) took about half
 * of the gateway's own time of a compression (issue 4: < 100 ms). Plain
 * postgres.js and only the columns used halve the read.
 */
export async function loadMessagesForCompression(db: Database, sessionId: number): Promise<CompressionSourceMessage[]> {
  const rows = await db.$client<(Omit<CompressionSourceMessage, 'id'> & { id: string | number })[]>`
    select id, seq, role, kind, content, tool_calls as "toolCalls", tool_call_id as "toolCallId", tool_name as "toolName", tokens
    from messages where session_id = ${sessionId} order by seq`;
  // bigint arrives as a string (message ids stay far below 2^53); converted in place, not copied row by row.
  for (const row of rows) row.id = Number(row.id);
  return rows as CompressionSourceMessage[];
}

export interface CompressionCommit {
  conversationId: number;
  oldSessionId: number;
  summary: string;
  summaryTokens: number;
  /** Ids of the old session's messages kept verbatim, oldest first. */
  keptMessageIds: number[];
  /**
   * The old session's last seq when its messages were read (the last one's
   * seq): the commit happens only if the session still ends there, so an
   * exchange committed while the summary was written (by a worker that took
   * the lease) is never left out of the chain (issue 29, defect 1).
   */
  readUpToSeq: number;
  keptTokens: number;
  /** Consecutive compressions that did not shrink the session, carried to the child. */
  compressFailures: number;
  blocked: boolean;
}

/** The commit's result: the child, or why there is none. */
export type CompressionCommitResult =
  | { kind: 'committed'; childSessionId: number }
  /** The pointer moved on (another compression, /new): nothing written. */
  | { kind: 'rotated' }
  /** The session grew after it was read (a turn committed meanwhile): the summary would leave that exchange out, so nothing is written. */
  | { kind: 'stale' };

/**
 * The compression commit (docs/compression.md), one statement: the child session
 * (parent = old) with the summary and the kept messages, the old session
 * ended `compressed`, and the conversation's pointer moved from old to child
 * only if it still points at old and the old session still ends at
 * `readUpToSeq` (nothing was committed to it since it was read). If not,
 * nothing else happens either: every other part hangs off the
 * compare-and-set row.
 */
export async function commitCompression(db: Database, input: CompressionCommit): Promise<CompressionCommitResult> {
  const kept = `{${input.keptMessageIds.join(',')}}`;
  const count = input.keptMessageIds.length + 1;
  const [row] = await db.execute<{ child_id: string | null; moved: boolean }>(sql`
    with moved as (
      select c.id from conversations c
      where c.id = ${input.conversationId} and c.current_session_id = ${input.oldSessionId}
      for update
    ), old as (
      -- last_seq in the UPDATE's own condition, not a separate read: a turn commit that landed while this
      -- statement waited for a lock is seen here (the row is re-checked at its newest version), never missed.
      update sessions set status = 'compressed', end_reason = 'compressed', ended_at = now()
      where id = ${input.oldSessionId} and status = 'active' and last_seq = ${input.readUpToSeq} and exists (select 1 from moved)
      returning id, recovery_ack_key, resume_owed
    ), child as (
      insert into sessions (conversation_id, parent_session_id, token_estimate, message_count, last_seq, recovery_ack_key, resume_owed, compress_failures, compress_blocked)
      select ${input.conversationId}, old.id, ${input.summaryTokens + input.keptTokens}, ${count}, ${count}, old.recovery_ack_key, old.resume_owed, ${input.compressFailures}, ${input.blocked}
      from old
      returning id
    ), summary as (
      insert into messages (session_id, seq, role, kind, content, tokens)
      select child.id, 1, 'assistant', 'summary', ${input.summary}, ${input.summaryTokens} from child
    ), copied as (
      insert into messages (session_id, seq, role, kind, content, tool_calls, tool_call_id, tool_name, inbound_event_id, turn_id, tokens, created_at)
      select child.id, 1 + k.ord, m.role, m.kind, m.content, m.tool_calls, m.tool_call_id, m.tool_name, m.inbound_event_id, m.turn_id, m.tokens, m.created_at
      from child, unnest(${kept}::bigint[]) with ordinality as k(id, ord)
      join messages m on m.id = k.id
    ), pointer as (
      update conversations set current_session_id = child.id, last_compressed_at = now(), updated_at = now()
      from child where conversations.id = ${input.conversationId}
      returning child.id
    )
    select (select id from pointer) as child_id, exists (select 1 from moved) as moved`);
  if (row?.child_id) return { kind: 'committed', childSessionId: Number(row.child_id) };
  return row?.moved ? { kind: 'stale' } : { kind: 'rotated' };
}

/** The parameters of core's judgeCompressionFailure (its policy, and compressionBackoffMaxDoublings). */
export interface CompressionFailureRule {
  backoffMs: number;
  maxAttempts: number;
  maxDoublings: number;
}

/**
 * A failed summariser: back off before the next automatic attempt, and stop after `maxAttempts` in a row.
 * Core's judgeCompressionFailure, written as one atomic increment (a read then a write could lose a count);
 * the worker's sql-rules test checks that the two agree.
 */
export async function recordCompressionFailure(db: Database, sessionId: number, rule: CompressionFailureRule): Promise<{ failures: number; blocked: boolean }> {
  const [row] = await db.execute<{ compress_failures: number; compress_blocked: boolean }>(sql`
    update sessions set
      compress_failures = compress_failures + 1,
      next_compress_at = now() + (${rule.backoffMs}::int * power(2, least(compress_failures, ${rule.maxDoublings}::int))) * interval '1 millisecond',
      compress_blocked = compress_blocked or compress_failures + 1 >= ${rule.maxAttempts}
    where id = ${sessionId}
    returning compress_failures, compress_blocked`);
  return { failures: row?.compress_failures ?? 0, blocked: row?.compress_blocked ?? false };
}
