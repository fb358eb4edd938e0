import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { conversations } from './conversations.ts';

/** A file reference as stored; the same shape as @switchboard/core's InboundAttachment (packages/db does not depend on core). */
export interface StoredAttachment {
  kind: 'image' | 'document' | 'audio';
  ref: string;
  mime: string | null;
  name: string | null;
  size: number | null;
  sha256?: string;
}

/** What a platform delivered, stored once under its platform event id. */
export const inboundEvents = pgTable(
  'inbound_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    platform: text('platform').notNull(),
    accountId: text('account_id').notNull(),
    eventId: text('event_id').notNull(),
    conversationId: bigint('conversation_id', { mode: 'number' })
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    text: text('text').notNull(),
    /**
     * The chat command the text is, parsed once at ingress (@switchboard/core's storedCommandOf: `stop`, `busy`,
     * `busy:queue`, …, or `text` for ordinary text); null only for text never parsed: rows stored before the column
     * existed, or by a gateway of the release that wrote null for ordinary text (docs/turns.md, "The stored command").
     */
    command: text('command'),
    /** Where replies go (chat, thread, message to reply to), as the adapter normalised it. */
    replyTarget: jsonb('reply_target').$type<Record<string, unknown>>().notNull(),
    /**
     * Files the message carries, as references (platform file id or URL, kind, MIME type, name, size), never their bytes;
     * the worker adds each one's sha256 once it fetched it (docs/media.md). Null: no files.
     */
    attachments: jsonb('attachments').$type<StoredAttachment[]>(),
    /** refused: over the queued-input cap; the user was told, it is never run. held: set aside by a restart-loop suspension. */
    status: text('status', { enum: ['pending', 'done', 'refused', 'held'] }).notNull().default('pending'),
    turnId: bigint('turn_id', { mode: 'number' }),
    /**
     * When the chat command's change (/new, /reset, /busy <mode>) was applied: set in the change's own transaction, only
     * while the event is pending, so two holdings of the conversation (a lost lease) never apply one command twice.
     */
    commandAppliedAt: timestamp('command_applied_at', { withTimezone: true }),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique('inbound_events_platform_account_event_key').on(t.platform, t.accountId, t.eventId),
    index('inbound_events_pending_idx').on(t.conversationId, t.id).where(sql`${t.status} = 'pending'`),
  ],
);
