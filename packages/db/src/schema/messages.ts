import { bigint, index, integer, jsonb, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { sessions } from './sessions.ts';

export type StoredToolCall = { id: string; name: string; arguments: string };

/** A transcript entry. Never holds API-only context. */
export const messages = pgTable(
  'messages',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    sessionId: bigint('session_id', { mode: 'number' })
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    role: text('role', { enum: ['user', 'assistant', 'tool'] }).notNull(),
    /** 'summary' opens a child session after compression; it is not something the user said. */
    kind: text('kind', { enum: ['message', 'summary'] }).notNull().default('message'),
    content: text('content').notNull().default(''),
    toolCalls: jsonb('tool_calls').$type<StoredToolCall[]>(),
    toolCallId: text('tool_call_id'),
    toolName: text('tool_name'),
    inboundEventId: bigint('inbound_event_id', { mode: 'number' }),
    turnId: bigint('turn_id', { mode: 'number' }),
    tokens: integer('tokens').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('messages_session_seq_key').on(t.sessionId, t.seq), index('messages_inbound_event_idx').on(t.inboundEventId)],
);
