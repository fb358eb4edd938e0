import { bigint, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The Discord Gateway resume state per bot token (docs/guarantees.md): kept
 * in Postgres, not Redis, because a Redis restarted empty must not take away
 * the only way to have Discord replay what no process has stored yet.
 * `holder_epoch` is the fencing token: bumped by each process that takes the
 * connection lease, and every write names it, so a holder that lost the
 * lease cannot overwrite its successor's session.
 */
export const discordGatewaySessions = pgTable('discord_gateway_sessions', {
  /** A hash of the token, never the token itself. */
  tokenId: text('token_id').primaryKey(),
  holderEpoch: bigint('holder_epoch', { mode: 'number' }).notNull().default(0),
  sessionId: text('session_id'),
  resumeUrl: text('resume_url'),
  /** The last sequence number whose event was stored; a resume replays everything after it. */
  seq: integer('seq'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
