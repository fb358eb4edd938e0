import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { conversations } from './conversations.ts';

export const turnStatuses = ['queued', 'running', 'completed', 'interrupted', 'failed', 'cancelled'] as const;
export type TurnStatus = (typeof turnStatuses)[number];

/** One run of the agent for one or more user messages. */
export const turns = pgTable(
  'turns',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    conversationId: bigint('conversation_id', { mode: 'number' })
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    sessionId: bigint('session_id', { mode: 'number' }).notNull(),
    status: text('status', { enum: turnStatuses }).notNull().default('running'),
    workerId: text('worker_id'),
    error: text('error'),
    /** Set when the turn was cut off by a restart (graceful or crash) and counted (docs/restarts.md). */
    cutOffAt: timestamp('cut_off_at', { withTimezone: true }),
    /**
     * The platform user the turn runs for: `platform:account:user` of the
     * first input it took (beginTurn). Null on turns from before issue 17.
     */
    userKey: text('user_key'),
    /** Which of the user's USER_MAX_RUNNING_TURNS slots the turn holds while running (issue 17, defect 3). */
    userSlot: integer('user_slot'),
    /** The model that answered the turn (or last failed), written by its commit (docs/turns.md "Model fallbacks"); null for runtimes without one and older turns. */
    model: text('model'),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
  },
  (t) => [
    // The database itself refuses a second running turn in one conversation (docs/turns.md).
    uniqueIndex('turns_one_running_idx').on(t.conversationId).where(sql`${t.status} = 'running'`),
    index('turns_conversation_idx').on(t.conversationId, t.id),
    // ... and a second running turn of one user in the same slot, so no race of workers can pass USER_MAX_RUNNING_TURNS.
    uniqueIndex('turns_user_slot_idx').on(t.userKey, t.userSlot).where(sql`${t.status} = 'running'`),
  ],
);
