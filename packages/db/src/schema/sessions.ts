import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { conversations } from './conversations.ts';

/** One segment of a conversation's transcript; compression ends it and starts a child. */
export const sessions = pgTable(
  'sessions',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    conversationId: bigint('conversation_id', { mode: 'number' })
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    parentSessionId: bigint('parent_session_id', { mode: 'number' }),
    status: text('status', { enum: ['active', 'compressed', 'finalized'] }).notNull().default('active'),
    endReason: text('end_reason'),
    /** Running token estimate of the stored messages (kept per message, docs/compression.md). */
    tokenEstimate: integer('token_estimate').notNull().default(0),
    messageCount: integer('message_count').notNull().default(0),
    lastSeq: integer('last_seq').notNull().default(0),
    /** Tool-tail key whose recovery note already reached the model (docs/turns.md, "The recovery note"). */
    recoveryAckKey: text('recovery_ack_key'),
    /**
     * A turn of this session was cut off by a restart and no request carrying
     * the resume note has reached the model since (docs/restarts.md, "Resume
     * once"): set with the cut-off, cleared on acceptance, inherited by a child.
     */
    resumeOwed: boolean('resume_owed').notNull().default(false),
    /** Failed or non-shrinking compressions in a row; resets on a successful one. */
    compressFailures: integer('compress_failures').notNull().default(0),
    /** No automatic compression before this time (backoff after a failure). */
    nextCompressAt: timestamp('next_compress_at', { withTimezone: true }),
    /** Automatic compression stopped for this session until an operator or /compact asks (docs/compression.md). */
    compressBlocked: boolean('compress_blocked').notNull().default(false),
    /** The runtime's thread for this session (a Codex thread id, continued with thread/resume after a restart). */
    runtimeThreadId: text('runtime_thread_id'),
    /**
     * The runtime's thread has received the transcript up to this seq
     * (docs/codex.md, "Threads"): advanced by a turn's commit when the runtime
     * reports that its input reached the thread; a Codex turn on an existing
     * thread carries the stored messages after it.
     */
    runtimeSyncedSeq: integer('runtime_synced_seq').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
  },
  (t) => [
    index('sessions_conversation_idx').on(t.conversationId),
    // A session has at most one child: the chain is a line, never a fork.
    uniqueIndex('sessions_one_child_idx').on(t.parentSessionId).where(sql`${t.parentSessionId} is not null`),
  ],
);
