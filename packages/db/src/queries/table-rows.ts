import { getTableColumns, type Table } from 'drizzle-orm';
import { conversations } from '../schema/conversations.ts';
import { inboundEvents } from '../schema/inbound-events.ts';
import { messages } from '../schema/messages.ts';
import { outbox } from '../schema/outbox.ts';
import { sessions } from '../schema/sessions.ts';

// The rows of the tables the hot statements return as JSON, beside their mappers: the queries import both from
// here, and this file imports no query file, so no query module and its row types depend on each other.

export type ConversationRow = typeof conversations.$inferSelect;
export type InboundEventRow = typeof inboundEvents.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
export type OutboxRow = typeof outbox.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;

export type JsonRow = Record<string, unknown>;

/**
 * Maps a `row_to_json` object (snake_case keys, timestamps as strings) to
 * the row type drizzle would give, with each column's own decoder
 * (`mapFromDriverValue`: timestamps to Dates, jsonb as drizzle reads it), so
 * this stays right when a column is added. Hand-written because the hot
 * query returns several tables' rows in one round trip, which drizzle's
 * query builder cannot express.
 */
function createRowMapper<T>(table: Table): (json: JsonRow) => T {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, name: column.name, column }));
  return (json) => {
    const row: JsonRow = {};
    for (const { key, name, column } of columns) {
      const value = json[name] ?? null;
      row[key] = value === null ? null : column.mapFromDriverValue(value);
    }
    return row as T;
  };
}

export const toConversation = createRowMapper<ConversationRow>(conversations);
export const toSession = createRowMapper<SessionRow>(sessions);
export const toInbound = createRowMapper<InboundEventRow>(inboundEvents);
export const toOutbox = createRowMapper<OutboxRow>(outbox);

export const toMessage = createRowMapper<MessageRow>(messages);
