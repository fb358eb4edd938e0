import { and, eq, lte, sql } from 'drizzle-orm';
import type { Database, Sql } from '../client.ts';
import { outbox } from '../schema/outbox.ts';

export type OutboxRow = typeof outbox.$inferSelect;

/**
 * Marks a part sent. A completed turn's reply reaching the user also clears
 * the conversation's restart counter (DESIGN §9): that is the proof the
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
export async function queueOverflowNotice(sql: Sql, input: { conversationId: number; platform: string; target: Record<string, unknown>; text: string }): Promise<boolean> {
  const rows = await sql`
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
  sql: Sql,
  input: { conversationKey: string; platform: string; accountId: string; chatId: string; threadId: string; userScope: string; target: Record<string, unknown>; text: string },
): Promise<number> {
  const [row] = await sql<{ conversation_id: string }[]>`
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
