import { and, eq, ne, sql } from 'drizzle-orm';
import { conversations } from '../schema/conversations.ts';
import { sessions } from '../schema/sessions.ts';
import type { DbExecutor } from './admin-executor.ts';

export type SuspendResult =
  | {
      kind: 'suspended';
      conversationId: number;
      reason: string;
      /** The session the conversation pointed at; resume restores it. */
      preSuspendSessionId: number | null;
      /** The restart counter before suspension cleared it. */
      restartCount: number;
      suspendedAt: Date;
    }
  | { kind: 'not_found' }
  | { kind: 'already_suspended'; reason: string | null };

export type ResumeResult =
  | {
      kind: 'resumed';
      conversationId: number;
      /** The pre-suspension session, current again (null if there was none). */
      restoredSessionId: number | null;
      /** A fresh session started while suspended, now finalized. */
      finalizedSessionId: number | null;
    }
  | { kind: 'not_found' }
  | { kind: 'not_suspended' };

/**
 * Suspends a conversation (docs/restarts.md; operators and the restart-loop guard):
 * status `suspended`, the current session parked in pre_suspend_session_id
 * and the pointer cleared, so the next message starts a fresh session while
 * the old chain stays intact for operators. The restart counter is cleared.
 * Pure database work in one transaction: lifecycle events are the caller's.
 */
export async function suspendConversation(db: DbExecutor, conversationId: number, reason: string): Promise<SuspendResult> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(conversations).where(eq(conversations.id, conversationId)).for('update');
    if (!row) return { kind: 'not_found' };
    if (row.status === 'suspended') return { kind: 'already_suspended', reason: row.suspendReason };
    const [updated] = await tx
      .update(conversations)
      .set({
        status: 'suspended',
        suspendReason: reason,
        suspendedAt: sql`now()`,
        preSuspendSessionId: row.currentSessionId,
        currentSessionId: null,
        restartCount: 0,
        runtimeCrashStreak: 0,
        updatedAt: sql`now()`,
      })
      .where(eq(conversations.id, conversationId))
      .returning({ suspendedAt: conversations.suspendedAt });
    return {
      kind: 'suspended',
      conversationId,
      reason,
      preSuspendSessionId: row.currentSessionId,
      restartCount: row.restartCount,
      suspendedAt: updated?.suspendedAt ?? new Date(),
    };
  });
}

/**
 * Resumes a suspended conversation: status `active`, and the pointer goes
 * back to the pre-suspension session. A fresh session that a message started
 * meanwhile is finalized (`resumed`); its messages stay stored but leave the
 * conversation's chain.
 */
export async function resumeConversation(db: DbExecutor, conversationId: number): Promise<ResumeResult> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(conversations).where(eq(conversations.id, conversationId)).for('update');
    if (!row) return { kind: 'not_found' };
    if (row.status !== 'suspended') return { kind: 'not_suspended' };
    const restored = row.preSuspendSessionId;
    const fresh = row.currentSessionId !== null && row.currentSessionId !== restored ? row.currentSessionId : null;
    if (fresh !== null) {
      await tx
        .update(sessions)
        .set({ status: 'finalized', endReason: 'resumed', endedAt: sql`now()` })
        .where(and(eq(sessions.id, fresh), ne(sessions.status, 'finalized')));
    }
    await tx
      .update(conversations)
      .set({
        status: 'active',
        suspendReason: null,
        suspendedAt: null,
        currentSessionId: restored,
        preSuspendSessionId: null,
        updatedAt: sql`now()`,
      })
      .where(eq(conversations.id, conversationId));
    return { kind: 'resumed', conversationId, restoredSessionId: restored, finalizedSessionId: fresh };
  });
}
