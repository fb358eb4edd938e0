import { bigint, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Lifecycle events (docs/restarts.md, "Lifecycle events"), recorded so webhook delivery survives restarts. */
export const lifecycleEvents = pgTable(
  'lifecycle_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    conversationId: bigint('conversation_id', { mode: 'number' }).notNull(),
    type: text('type').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('lifecycle_events_conversation_idx').on(t.conversationId, t.id)],
);

/** One event's delivery to one configured webhook URL, retried with backoff. */
export const eventDeliveries = pgTable(
  'event_deliveries',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    eventId: bigint('event_id', { mode: 'number' })
      .notNull()
      .references(() => lifecycleEvents.id, { onDelete: 'cascade' }),
    conversationId: bigint('conversation_id', { mode: 'number' }).notNull(),
    url: text('url').notNull(),
    status: text('status', { enum: ['pending', 'sent', 'failed'] }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
  },
  (t) => [index('event_deliveries_pending_idx').on(t.url, t.conversationId, t.id)],
);
