import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { conversations } from '../schema/conversations.ts';
import { inboundEvents } from '../schema/inbound-events.ts';
import { messages, type StoredToolCall } from '../schema/messages.ts';
import { outbox } from '../schema/outbox.ts';
import { sessions } from '../schema/sessions.ts';
import { turns, type TurnStatus } from '../schema/turns.ts';

export type ConversationRow = typeof conversations.$inferSelect;
export type InboundEventRow = typeof inboundEvents.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;

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

export async function loadSessionMessages(db: Database, sessionId: number): Promise<MessageRow[]> {
  return db.select().from(messages).where(eq(messages.sessionId, sessionId)).orderBy(asc(messages.seq));
}

/**
 * Inserts the running turn. Only the holder of the conversation's lease calls
 * this, so a turn still marked running belongs to a worker that lost the
 * lease (crashed or cut off): it is closed as failed before the new one starts,
 * and the partial unique index guarantees there is never a second running turn.
 */
export async function beginTurn(db: Database, input: { conversationId: number; sessionId: number; workerId: string }): Promise<{ turnId: number; closedStale: number }> {
  return db.transaction(async (tx) => {
    const stale = await tx
      .update(turns)
      .set({ status: 'failed', error: 'cut_off', endedAt: sql`now()` })
      .where(and(eq(turns.conversationId, input.conversationId), eq(turns.status, 'running')))
      .returning({ id: turns.id });
    const [turn] = await tx.insert(turns).values({ ...input, status: 'running' }).returning({ id: turns.id });
    if (!turn) throw new Error('turn insert returned nothing');
    return { turnId: turn.id, closedStale: stale.length };
  });
}

export interface NewTranscriptMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  tokens: number;
  toolCalls?: StoredToolCall[];
  toolCallId?: string;
  toolName?: string;
  inboundEventId?: number;
}

export interface CommitTurnInput {
  /** Absent for a chat command, which consumes its event and replies without a turn. */
  turnId?: number;
  conversationId: number;
  sessionId: number;
  status: Exclude<TurnStatus, 'queued' | 'running'>;
  error?: string;
  /** The inbound events this turn consumed. */
  inboundEventIds: number[];
  messages: NewTranscriptMessage[];
  /** Reply parts, in order, delivered after commit. */
  replies: { platform: string; target: Record<string, unknown>; chunks: string[] }[];
}

/**
 * Writes everything a turn produced in one transaction (DESIGN §11): the
 * transcript entries with consecutive per-session sequence numbers, the
 * consumed inbound events marked done, the outbox rows, and the turn's end.
 */
export async function commitTurn(db: Database, input: CommitTurnInput): Promise<{ outboxIds: number[] }> {
  return db.transaction(async (tx) => {
    let firstSeq = 0;
    if (input.messages.length > 0) {
      const tokens = input.messages.reduce((sum, m) => sum + m.tokens, 0);
      const [session] = await tx
        .update(sessions)
        .set({
          lastSeq: sql`${sessions.lastSeq} + ${input.messages.length}`,
          messageCount: sql`${sessions.messageCount} + ${input.messages.length}`,
          tokenEstimate: sql`${sessions.tokenEstimate} + ${tokens}`,
        })
        .where(eq(sessions.id, input.sessionId))
        .returning({ lastSeq: sessions.lastSeq });
      if (!session) throw new Error(`session ${input.sessionId} vanished`);
      firstSeq = session.lastSeq - input.messages.length + 1;
      await tx.insert(messages).values(
        input.messages.map((m, i) => ({
          sessionId: input.sessionId,
          seq: firstSeq + i,
          role: m.role,
          content: m.content,
          tokens: m.tokens,
          toolCalls: m.toolCalls ?? null,
          toolCallId: m.toolCallId ?? null,
          toolName: m.toolName ?? null,
          inboundEventId: m.inboundEventId ?? null,
          turnId: input.turnId ?? null,
        })),
      );
    }
    if (input.inboundEventIds.length > 0) {
      await tx.update(inboundEvents).set({ status: 'done', turnId: input.turnId ?? null }).where(inArray(inboundEvents.id, input.inboundEventIds));
      // Input was taken, so the queue is below its cap again and a later overflow is told anew.
      await tx.update(conversations).set({ updatedAt: sql`now()`, inputOverflowAt: null }).where(eq(conversations.id, input.conversationId));
    }
    const rows = input.replies.flatMap((reply) =>
      reply.chunks.map((text, chunkIndex) => ({
        conversationId: input.conversationId,
        turnId: input.turnId ?? null,
        platform: reply.platform,
        target: reply.target,
        chunkIndex,
        text,
      })),
    );
    const outboxIds = rows.length > 0 ? (await tx.insert(outbox).values(rows).returning({ id: outbox.id })).map((r) => r.id) : [];
    if (input.turnId !== undefined) {
      await tx
        .update(turns)
        .set({ status: input.status, error: input.error ?? null, endedAt: sql`now()` })
        .where(eq(turns.id, input.turnId));
    }
    return { outboxIds };
  });
}
