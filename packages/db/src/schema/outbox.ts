import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { conversations } from './conversations.ts';

/** A button under a sent part: its label, and the payload a press brings back (callback_data, action value, custom_id). */
export interface OutboxButton {
  label: string;
  payload: string;
  style?: 'primary' | 'danger';
}

/** One chunk of a reply waiting for (or done with) delivery, written with the assistant message, in one transaction. */
export const outbox = pgTable(
  'outbox',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    conversationId: bigint('conversation_id', { mode: 'number' })
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    turnId: bigint('turn_id', { mode: 'number' }),
    messageId: bigint('message_id', { mode: 'number' }),
    platform: text('platform').notNull(),
    target: jsonb('target').$type<Record<string, unknown>>().notNull(),
    chunkIndex: integer('chunk_index').notNull().default(0),
    text: text('text').notNull(),
    /**
     * `streaming`: the message of a reply still growing (docs/turns.md
     * "Streaming replies"), never delivered as it is; the turn's commit makes
     * it the reply's first part (`pending`), edited to its final text.
     */
    status: text('status', { enum: ['pending', 'sent', 'failed', 'streaming'] }).notNull().default('pending'),
    /** The row was a streamed message: delivery edits `platform_message_id` (or posts and then edits, if its id was never recorded). */
    streamed: boolean('streamed').notNull().default(false),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    platformMessageId: text('platform_message_id'),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    /**
     * The worker sending this row, so two workers that both think they hold
     * the conversation (a lost lease) never send it twice. Void once that
     * worker is dead or stopped, or past `claimed_until` (docs/turns.md).
     */
    /**
     * Buttons under this part (a `/schedules` list's Cancel buttons), sent
     * with the platform's buttons; null: none. A press comes back as the
     * command the button stands for (docs/schedules.md, "In chat").
     */
    buttons: jsonb('buttons').$type<OutboxButton[]>(),
    claimedBy: text('claimed_by'),
    claimedUntil: timestamp('claimed_until', { withTimezone: true }),
  },
  (t) => [
    index('outbox_pending_idx').on(t.conversationId, t.id).where(sql`${t.status} = 'pending'`),
    // One growing message per conversation: a turn resumed after a crash takes over the one its cut-off turn left.
    uniqueIndex('outbox_streaming_idx').on(t.conversationId).where(sql`${t.status} = 'streaming'`),
  ],
);
