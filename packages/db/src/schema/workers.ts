import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Worker liveness: a row per worker process, its heartbeat renewed every few seconds (docs/restarts.md). */
export const workers = pgTable('workers', {
  id: text('id').primaryKey(),
  hostname: text('hostname').notNull(),
  pid: integer('pid').notNull(),
  status: text('status', { enum: ['running', 'stopping', 'stopped', 'dead'] }).notNull().default('running'),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
  heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }).notNull().defaultNow(),
  stoppedAt: timestamp('stopped_at', { withTimezone: true }),
});
