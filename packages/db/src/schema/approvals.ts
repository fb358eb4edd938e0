import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { conversations } from './conversations.ts';

export const approvalStatuses = ['pending', 'approved', 'approved_for_session', 'denied', 'cancelled', 'expired'] as const;
export type ApprovalStatus = (typeof approvalStatuses)[number];

/**
 * A question a runtime put to the chat user (run this command? change these
 * files?) and its answer, kept with the turn for the transcript and the audit
 * (docs/codex.md, "Approvals in chat").
 */
export const approvals = pgTable(
  'approvals',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    conversationId: bigint('conversation_id', { mode: 'number' })
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    turnId: bigint('turn_id', { mode: 'number' }).notNull(),
    /** Unguessable id carried in button payloads (callback_data, action value, custom_id). */
    token: text('token').notNull().unique(),
    kind: text('kind', { enum: ['command', 'file_change', 'other'] }).notNull(),
    summary: text('summary').notNull(),
    detail: text('detail'),
    /**
     * Set when the question could not be shown whole (issue 30, finding 4): approving then takes
     * typing `/approve <code>`; no button approves it. Null: the question was shown whole.
     */
    approveCode: text('approve_code'),
    /** `platform:account:user` of the user whose message started the turn: the one who may answer (besides approvers). */
    askedOfUserKey: text('asked_of_user_key'),
    status: text('status', { enum: approvalStatuses }).notNull().default('pending'),
    decidedByUserKey: text('decided_by_user_key'),
    /** How the answer came: button, text command, timeout, interrupt, stop, auto. */
    decidedVia: text('decided_via'),
    /** Where the question was posted (platform message ids), to edit it once answered. */
    questionRef: jsonb('question_ref').$type<Record<string, unknown>>(),
    askedAt: timestamp('asked_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    /**
     * When the posted question was edited to its outcome (its buttons gone). Null while that is
     * owed: the asking turn does it, or, when that turn's worker died, the recovery sweep
     * (docs/codex.md, "Approvals in chat").
     */
    questionTidiedAt: timestamp('question_tidied_at', { withTimezone: true }),
  },
  (t) => [
    index('approvals_turn_idx').on(t.turnId),
    // At most one open question per conversation: a turn waits on one approval at a time.
    uniqueIndex('approvals_one_pending_idx').on(t.conversationId).where(sql`${t.status} = 'pending'`),
    // What the recovery sweep reads every pass (claimUntidiedQuestions): only posted questions still owed their edit.
    index('approvals_untidied_idx').on(t.id).where(sql`${t.questionTidiedAt} is null and ${t.questionRef} is not null`),
  ],
);
