import { getTableColumns, type Table } from 'drizzle-orm';
import { conversations } from '../schema/conversations.ts';
import { inboundEvents } from '../schema/inbound-events.ts';
import { messages } from '../schema/messages.ts';
import { outbox } from '../schema/outbox.ts';
import { sessions } from '../schema/sessions.ts';
import type { OutboxRow } from './outbox-store.ts';
import type { SessionRow } from './session-store.ts';
import type { ConversationRow, InboundEventRow, MessageRow } from './turn-store.ts';

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
