import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { conversations } from './conversations.ts';

/** `ended`: a one-off that ran (or was missed); `cancelled`: by the agent, a chat user or an operator. */
export const scheduleStatuses = ['active', 'ended', 'cancelled'] as const;

/** How the last occurrence went (docs/schedules.md, "What is promised"). */
export const occurrenceOutcomes = ['ran', 'missed', 'paused'] as const;

/**
 * Scheduled turns (docs/schedules.md). Postgres holds what exists; BullMQ
 * holds only when each runs next (a job scheduler per cron schedule, a
 * delayed job per one-off) and is rebuilt from this table at every worker's
 * start. A deleted conversation takes its schedules with it.
 */
export const schedules = pgTable(
  'schedules',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    conversationId: bigint('conversation_id', { mode: 'number' })
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    prompt: text('prompt').notNull(),
    /** A one-off's time; null for a cron schedule. */
    runAt: timestamp('run_at', { withTimezone: true }),
    /** A cron schedule's five-field expression; null for a one-off. */
    cron: text('cron'),
    timeZone: text('time_zone').notNull().default('UTC'),
    status: text('status', { enum: scheduleStatuses }).notNull().default('active'),
    /** Who asked: a chat user's key (`platform:account:user`, counted against USER_MAX_SCHEDULES) or `admin:<token name>`. */
    createdBy: text('created_by').notNull(),
    /**
     * The turn's call that made it (`<conversation>:<first input event>:<hash of the arguments>`), for the `schedule`
     * tool only: a turn run again after a crash calls the tool again, and gets the schedule it made the first time.
     */
    originKey: text('origin_key').unique(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    lastOccurrenceAt: timestamp('last_occurrence_at', { withTimezone: true }),
    lastOutcome: text('last_outcome', { enum: occurrenceOutcomes }),
    runs: integer('runs').notNull().default(0),
    missed: integer('missed').notNull().default(0),
  },
  (t) => [
    index('schedules_conversation_idx').on(t.conversationId, t.status),
    index('schedules_active_creator_idx').on(t.createdBy).where(sql`${t.status} = 'active'`),
  ],
);
