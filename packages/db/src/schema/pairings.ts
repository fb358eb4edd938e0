import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { conversations } from './conversations.ts';

/** `denied`: an operator refused it (the user gets no new code for a day); `evicted`: the oldest pending code, dropped for a newcomer at the platform's cap. */
export const pairingStatuses = ['pending', 'approved', 'expired', 'denied', 'evicted'] as const;
export type PairingStatus = (typeof pairingStatuses)[number];

/**
 * One-time codes offered to unknown users in direct messages under
 * DM_POLICY=pairing (docs/admin.md, "Pairing"). A code is pending until an
 * operator approves it or its hour is over; only then may the same user get
 * another.
 */
export const pairings = pgTable(
  'pairings',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    platform: text('platform').notNull(),
    accountId: text('account_id').notNull(),
    userId: text('user_id').notNull(),
    code: text('code').notNull().unique(),
    status: text('status', { enum: pairingStatuses }).notNull().default('pending'),
    /** The user's direct conversation: where the code and, once approved, the welcome are sent. */
    conversationId: bigint('conversation_id', { mode: 'number' })
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    /** The platform's reply target for that conversation (as the outbox takes it). */
    target: jsonb('target').$type<Record<string, unknown>>().notNull(),
    requestedAt: timestamp('requested_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** When the user was last sent the code: reminders are spaced out (the rate limit). */
    lastToldAt: timestamp('last_told_at', { withTimezone: true }).notNull().defaultNow(),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    /** The admin token's name that approved it. */
    decidedBy: text('decided_by'),
  },
  (t) => [
    // One pending code per user, whatever races: the per-platform lock serialises requests, this makes it a fact.
    uniqueIndex('pairings_one_pending_idx').on(t.platform, t.userId).where(sql`${t.status} = 'pending'`),
    index('pairings_platform_status_idx').on(t.platform, t.status),
  ],
);

/** Users an operator approved through pairing: allowlisted alongside the environment's *_ALLOWED_USERS until revoked. */
export const pairedUsers = pgTable(
  'paired_users',
  {
    platform: text('platform').notNull(),
    userId: text('user_id').notNull(),
    /** The code that was approved. */
    code: text('code').notNull(),
    approvedBy: text('approved_by').notNull(),
    pairedAt: timestamp('paired_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.platform, t.userId] })],
);
