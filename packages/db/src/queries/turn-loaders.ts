import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { conversations } from '../schema/conversations.ts';
import { inboundEvents } from '../schema/inbound-events.ts';
import { sessions } from '../schema/sessions.ts';
import { toMessage, type ConversationRow, type InboundEventRow, type JsonRow, type MessageRow } from './table-rows.ts';

// What the worker reads around a turn: the conversation, its current session (the first one created here), its
// pending input and the session's transcript. Beginning a turn is turn-begin.ts, its commit turn-commit.ts.

export async function loadConversation(db: Database, conversationId: number): Promise<ConversationRow | undefined> {
  const [row] = await db.select().from(conversations).where(eq(conversations.id, conversationId));
  return row;
}

/**
 * Returns the conversation's current session, creating the first one if it
 * has none. The pointer is set by compare-and-set, so two callers can never
 * give one conversation two first sessions.
 */
export async function ensureCurrentSession(db: Database, conversation: ConversationRow): Promise<number> {
  if (conversation.currentSessionId !== null) return conversation.currentSessionId;
  return db.transaction(async (tx) => {
    const [created] = await tx.insert(sessions).values({ conversationId: conversation.id }).returning({ id: sessions.id });
    if (!created) throw new Error('session insert returned nothing');
    const moved = await tx
      .update(conversations)
      .set({ currentSessionId: created.id })
      .where(and(eq(conversations.id, conversation.id), isNull(conversations.currentSessionId)))
      .returning({ id: conversations.id });
    if (moved.length === 1) return created.id;
    tx.rollback();
    return 0;
  }).catch(async (error: unknown) => {
    const again = await loadConversation(db, conversation.id);
    if (again?.currentSessionId) return again.currentSessionId;
    throw error;
  });
}

export async function loadPendingInbound(db: Database, conversationId: number, limit: number): Promise<InboundEventRow[]> {
  return db
    .select()
    .from(inboundEvents)
    .where(and(eq(inboundEvents.conversationId, conversationId), eq(inboundEvents.status, 'pending')))
    .orderBy(asc(inboundEvents.id))
    .limit(limit);
}

/**
 * A session's messages in order, or only those after `afterSeq` (the history
 * cache's top-up). One JSON value mapped by the schema (table-rows.ts): a
 * prepared postgres.js statement, and far less per-row work than drizzle's
 * row mapping, which dominated reads of long sessions.
 */
export async function loadSessionMessages(db: Database, sessionId: number, afterSeq = 0): Promise<MessageRow[]> {
  const [row] = await db.$client<{ rows: JsonRow[] }[]>`
    select coalesce(json_agg(m order by m.seq), '[]') as rows
    from messages m where m.session_id = ${sessionId} and m.seq > ${afterSeq}`;
  return (row?.rows ?? []).map(toMessage);
}
