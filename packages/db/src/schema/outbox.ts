import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { conversations } from './conversations.ts';

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
    status: text('status', { enum: ['pending', 'sent', 'failed'] }).notNull().default('pending'),
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
    claimedBy: text('claimed_by'),
    claimedUntil: timestamp('claimed_until', { withTimezone: true }),
  },
  (t) => [index('outbox_pending_idx').on(t.conversationId, t.id).where(sql`${t.status} = 'pending'`)],
);
