import { and, desc, eq, inArray, lt, sql, type SQL } from 'drizzle-orm';
import { outbox } from '../schema/outbox.ts';
import type { DbExecutor } from './admin-executor.ts';

export interface OutboxFilter {
  /** `undelivered`: pending and failed. */
  status: 'undelivered' | 'pending' | 'failed';
  conversationId?: number;
  cursor?: number;
  limit: number;
}

export type OutboxEntry = typeof outbox.$inferSelect;

export type OutboxRetryResult = { kind: 'retried'; row: OutboxEntry } | { kind: 'not_found' } | { kind: 'already_sent' };

/** Undelivered outbox rows, newest first (failures are visible to operators). */
export async function listOutbox(db: DbExecutor, filter: OutboxFilter): Promise<{ items: OutboxEntry[]; nextCursor: number | null }> {
  const where: SQL[] = [filter.status === 'undelivered' ? inArray(outbox.status, ['pending', 'failed']) : eq(outbox.status, filter.status)];
  if (filter.conversationId !== undefined) where.push(eq(outbox.conversationId, filter.conversationId));
  if (filter.cursor !== undefined) where.push(lt(outbox.id, filter.cursor));
  const rows = await db
    .select()
    .from(outbox)
    .where(and(...where))
    .orderBy(desc(outbox.id))
    .limit(filter.limit + 1);
  const items = rows.slice(0, filter.limit);
  return { items, nextCursor: rows.length > filter.limit ? (items.at(-1)?.id ?? null) : null };
}

/**
 * Makes a failed (or waiting) row due now with a fresh attempt budget; the
 * caller then wakes the conversation so its lease holder delivers it. A sent
 * row is never sent again.
 */
export async function retryOutboxRow(db: DbExecutor, id: number): Promise<OutboxRetryResult> {
  const [updated] = await db
    .update(outbox)
    .set({ status: 'pending', attempts: 0, nextAttemptAt: sql`now()` })
    .where(and(eq(outbox.id, id), inArray(outbox.status, ['pending', 'failed'])))
    .returning();
  if (updated) return { kind: 'retried', row: updated };
  const [existing] = await db.select({ id: outbox.id }).from(outbox).where(eq(outbox.id, id));
  return existing ? { kind: 'already_sent' } : { kind: 'not_found' };
}
