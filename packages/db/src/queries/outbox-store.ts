import { and, eq, lte, sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { outbox } from '../schema/outbox.ts';

/**
 * Marks a part sent. A completed turn's reply reaching the user also clears
 * the conversation's restart counter (docs/restarts.md): that is the proof the
 * conversation gets through. Notices, command replies and a failed or
 * stopped turn's line are delivered too, but prove nothing about the turn
 * that keeps being cut off, so they leave the counter alone.
 */
export async function markOutboxSent(db: Database, id: number, platformMessageId: string): Promise<void> {
  // After every reply part: postgres.js, prepared once per connection (drizzle's execute plans it anew each time).
  await db.$client`
    with sent as (
      update outbox set status = 'sent', platform_message_id = ${platformMessageId}, sent_at = now(), attempts = attempts + 1
      where id = ${id}
      returning conversation_id, turn_id
    )
    update conversations set restart_count = 0
    from sent join turns t on t.id = sent.turn_id and t.status = 'completed'
    where conversations.id = sent.conversation_id and conversations.restart_count > 0`;
}

/** How long a claim holds at most, whatever its worker's health: a cap, far above any in-line send with its retries. */
export const outboxClaimMs = 5 * 60_000;

/**
 * The claim id of one lease holding: `<worker id>#<lease owner>`. Per holding,
 * not per worker: after a lost lease one process may run two work loops for
 * one conversation, and they must not both send a row.
 */
export function outboxClaimId(workerId: string, holding: string): string {
  return `${workerId}#${holding}`;
}

/**
 * Claims a pending row for sending under `claimId` (outboxClaimId), unless
 * another holding whose worker is alive (running or stopping, heartbeat
 * within `deadAfterMs`) has an unexpired claim on it. Two workers that both believe they hold the
 * conversation (its lease was lost in Redis) therefore never send one row
 * twice; a claim of a dead or stopped worker is void, so a crash delays a
 * resend no longer than the worker's death takes to notice. Returns whether
 * this worker may send the row now.
 */
export async function claimOutboxRow(db: Database, id: number, claimId: string, deadAfterMs: number): Promise<boolean> {
  const rows = await db.$client`
    update outbox o set claimed_by = ${claimId}, claimed_until = now() + ${outboxClaimMs}::int * interval '1 millisecond'
    where o.id = ${id} and o.status = 'pending' and (
      o.claimed_by is null or o.claimed_by = ${claimId} or o.claimed_until < now()
      or not exists (
        select 1 from workers w where w.id = split_part(o.claimed_by, '#', 1) and w.status in ('running', 'stopping')
          and w.heartbeat_at >= now() - ${deadAfterMs}::int * interval '1 millisecond'))
    returning o.id`;
  return rows.length === 1;
}

/** Gives up this worker's claims on rows it will not send now, so whoever holds the conversation next can. */
export async function releaseOutboxClaims(db: Database, ids: readonly number[], claimId: string): Promise<void> {
  if (ids.length === 0) return;
  await db.$client`
    update outbox set claimed_by = null, claimed_until = null
    where id = any(${`{${ids.join(',')}}`}::bigint[]) and claimed_by = ${claimId} and status = 'pending'`;
}

export async function markOutboxFailed(db: Database, id: number, error: string): Promise<void> {
  await db
    .update(outbox)
    .set({ status: 'failed', lastError: error, attempts: sql`${outbox.attempts} + 1` })
    .where(eq(outbox.id, id));
}

/** Leaves the row pending for a later attempt (the outbox sweep picks it up when due). */
export async function rescheduleOutbox(db: Database, id: number, error: string, delayMs: number): Promise<void> {
  await db
    .update(outbox)
    .set({
      lastError: error,
      attempts: sql`${outbox.attempts} + 1`,
      nextAttemptAt: sql`now() + ${`${Math.ceil(delayMs)} milliseconds`}::interval`,
      // Whoever holds the conversation when the row is due sends it.
      claimedBy: null,
      claimedUntil: null,
    })
    .where(eq(outbox.id, id));
}

/** Conversations with outbox rows that are due, for the recovery sweep. */
export async function findConversationsWithDueOutbox(db: Database, limit: number): Promise<number[]> {
  const rows = await db
    .selectDistinct({ conversationId: outbox.conversationId })
    .from(outbox)
    .where(and(eq(outbox.status, 'pending'), lte(outbox.nextAttemptAt, sql`now() - interval '2 seconds'`)))
    .limit(limit);
  return rows.map((r) => r.conversationId);
}

/**
 * Queues `text` for the user once per overflow: only if the conversation was
 * not already told (the flag is cleared when a turn takes input again).
 * Returns whether a notice was queued.
 */
export async function queueOverflowNotice(db: Database, input: { conversationId: number; platform: string; target: Record<string, unknown>; text: string }): Promise<boolean> {
  const rows = await db.$client`
    with flagged as (
      update conversations set input_overflow_at = now()
      where id = ${input.conversationId} and input_overflow_at is null
      returning id
    )
    insert into outbox (conversation_id, platform, target, text)
    select id, ${input.platform}, ${JSON.stringify(input.target)}::jsonb, ${input.text} from flagged
    returning id`;
  return rows.length > 0;
}

/**
 * Queues a one-line notice for a conversation that may not exist yet (a
 * refused user's first message): the conversation row is created if needed,
 * in the same statement as the outbox row.
 */
export async function queueNoticeForAddress(
  db: Database,
  input: { conversationKey: string; platform: string; accountId: string; chatId: string; threadId: string; userScope: string; target: Record<string, unknown>; text: string },
): Promise<number> {
  const [row] = await db.$client<{ conversation_id: string }[]>`
    with conv as (
      insert into conversations (key, platform, account_id, chat_id, thread_id, user_scope)
      values (${input.conversationKey}, ${input.platform}, ${input.accountId}, ${input.chatId}, ${input.threadId}, ${input.userScope})
      on conflict (key) do update set updated_at = now()
      returning id
    )
    insert into outbox (conversation_id, platform, target, text)
    select id, ${input.platform}, ${JSON.stringify(input.target)}::jsonb, ${input.text} from conv
    returning conversation_id`;
  return Number(row?.conversation_id);
}

/**
 * Whether `text` was queued to this conversation within the last `seconds`
 * (by the database's clock): a reply that answers nothing, like a `/stop` with
 * nothing running, is said at most once a minute per conversation (issue 30,
 * finding 5), so a flood in a shared group cannot spend the bot's quota.
 */
export async function wasToldRecently(db: Database, input: { conversationId: number; text: string; seconds: number }): Promise<boolean> {
  const [row] = await db
    .select({ told: sql<boolean>`true` })
    .from(outbox)
    .where(and(eq(outbox.conversationId, input.conversationId), eq(outbox.text, input.text), sql`${outbox.createdAt} > now() - ${input.seconds}::int * interval '1 second'`))
    .limit(1);
  return row !== undefined;
}
