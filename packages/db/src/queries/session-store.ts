import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { conversations } from '../schema/conversations.ts';
import { sessions } from '../schema/sessions.ts';
import type { DbExecutor } from './admin-executor.ts';
import type { SessionRow } from './table-rows.ts';

export async function loadSession(db: Database, sessionId: number): Promise<SessionRow | undefined> {
  const [row] = await db.select().from(sessions).where(eq(sessions.id, sessionId));
  return row;
}

/**
 * Records that a request carrying the recovery note for this tool tail
 * reached the model, so later turns over the same tail carry no note (docs/turns.md, "The recovery note").
 */
export async function acknowledgeRecoveryNote(db: Database, note: { sessionId: number; tailKey: string; turnId: number }): Promise<void> {
  // Fenced like the resume note's (below): a holder that lost the conversation, or a stalled one that woke after
  // its turn was cut off, writes nothing, so it can neither set the key back to an older tail nor acknowledge a
  // note whose answer it never kept.
  await db.$client`
    update sessions set recovery_ack_key = ${note.tailKey}
    where id = ${note.sessionId}
      and exists (select 1 from turns where id = ${note.turnId} and status = 'running' and cut_off_at is null)`;
}

/**
 * Records that a request carrying the resume note reached the model, so no
 * later turn carries it (docs/restarts.md, "Resume once"). Fenced like a
 * commit: only a turn still running clears it, so a holder that lost the
 * lease cannot clear a note owed for a cut-off recorded after its own. The
 * session's child is cleared too, in case a compression moved the pointer
 * while this request was on its way.
 */
export async function acknowledgeResumeNote(db: Database, note: { sessionId: number; turnId: number }): Promise<void> {
  await db.$client`
    update sessions set resume_owed = false
    where (id = ${note.sessionId} or parent_session_id = ${note.sessionId}) and resume_owed
      and exists (select 1 from turns where id = ${note.turnId} and status = 'running' and cut_off_at is null)`;
}

export type ResetResult = { kind: 'reset'; oldSessionId: number | null; newSessionId: number } | { kind: 'not_found' };

/**
 * /new, /reset and operator resets: the current session is finalized (kept
 * for operators), a fresh one becomes current, the restart counter clears.
 */
export async function resetConversationSession(db: DbExecutor, conversationId: number, reason: string): Promise<ResetResult> {
  return db.transaction(async (tx) => {
    const [conversation] = await tx.select().from(conversations).where(eq(conversations.id, conversationId)).for('update');
    if (!conversation) return { kind: 'not_found' };
    const oldSessionId = conversation.currentSessionId;
    if (oldSessionId !== null) {
      await tx
        .update(sessions)
        .set({ status: 'finalized', endReason: reason, endedAt: sql`now()` })
        .where(and(eq(sessions.id, oldSessionId), eq(sessions.status, 'active')));
    }
    const [created] = await tx.insert(sessions).values({ conversationId }).returning({ id: sessions.id });
    if (!created) throw new Error('session insert returned nothing');
    await tx
      .update(conversations)
      .set({ currentSessionId: created.id, restartCount: 0, runtimeCrashStreak: 0, updatedAt: sql`now()` })
      .where(eq(conversations.id, conversationId));
    return { kind: 'reset', oldSessionId, newSessionId: created.id };
  });
}

export async function setBusyMode(db: DbExecutor, conversationId: number, mode: 'interrupt' | 'queue' | 'collect' | 'steer' | null): Promise<boolean> {
  const rows = await db
    .update(conversations)
    .set({ busyMode: mode, updatedAt: sql`now()` })
    .where(eq(conversations.id, conversationId))
    .returning({ id: conversations.id });
  return rows.length === 1;
}

/** Ages (ms, by the database clock) of the newest and oldest pending input, for the collect debounce. */
export async function pendingInputAges(db: Database, conversationId: number): Promise<{ newestMs: number; oldestMs: number } | null> {
  const [row] = await db.$client<{ newest_ms: number | null; oldest_ms: number | null }[]>`
    select extract(epoch from now() - max(received_at)) * 1000 as newest_ms,
           extract(epoch from now() - min(received_at)) * 1000 as oldest_ms
    from inbound_events where conversation_id = ${conversationId} and status = 'pending'`;
  if (!row || row.newest_ms === null || row.oldest_ms === null) return null;
  return { newestMs: Number(row.newest_ms), oldestMs: Number(row.oldest_ms) };
}
