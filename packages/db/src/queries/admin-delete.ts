import { eq } from 'drizzle-orm';
import { conversations } from '../schema/conversations.ts';
import type { DbExecutor } from './admin-executor.ts';

export type DeleteConversationResult =
  | { kind: 'deleted'; conversationId: number; key: string; finalizedSessionId: number | null }
  | { kind: 'not_found' }
  | { kind: 'confirmation_mismatch' };

/**
 * An operator's delete: the conversation row goes, and with it (ON DELETE
 * CASCADE) every session, message, inbound event, turn and outbox row. Only
 * when `confirmKey` equals the conversation's key, so a mistyped id deletes
 * nothing. A later message from the same chat starts a new conversation.
 */
export async function deleteConversation(db: DbExecutor, conversationId: number, confirmKey: string): Promise<DeleteConversationResult> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(conversations).where(eq(conversations.id, conversationId)).for('update');
    if (!row) return { kind: 'not_found' };
    if (row.key !== confirmKey) return { kind: 'confirmation_mismatch' };
    await tx.delete(conversations).where(eq(conversations.id, conversationId));
    return { kind: 'deleted', conversationId, key: row.key, finalizedSessionId: row.currentSessionId ?? row.preSuspendSessionId };
  });
}
