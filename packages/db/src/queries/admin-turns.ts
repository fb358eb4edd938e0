import { and, desc, eq, getTableColumns, lt, sql, type SQL } from 'drizzle-orm';
import { turns, type TurnStatus } from '../schema/turns.ts';
import type { DbExecutor } from './admin-executor.ts';

export interface TurnFilter {
  status?: TurnStatus;
  conversationId?: number;
  cursor?: number;
  limit: number;
}

export type TurnSummary = typeof turns.$inferSelect & {
  /** Ended turns: their length; running turns: how long they have run so far (database clock). */
  durationMs: number;
};

const durationMs = sql<number>`(extract(epoch from coalesce(${turns.endedAt}, now()) - ${turns.startedAt}) * 1000)::float8`.mapWith(Number);

/** Turns, newest first: running ones with `status: 'running'`, recent ones with their outcome. */
export async function listTurns(db: DbExecutor, filter: TurnFilter): Promise<{ items: TurnSummary[]; nextCursor: number | null }> {
  const where: SQL[] = [];
  if (filter.status) where.push(eq(turns.status, filter.status));
  if (filter.conversationId !== undefined) where.push(eq(turns.conversationId, filter.conversationId));
  if (filter.cursor !== undefined) where.push(lt(turns.id, filter.cursor));
  const rows = await db
    .select({ ...getTableColumns(turns), durationMs })
    .from(turns)
    .where(and(...where))
    .orderBy(desc(turns.id))
    .limit(filter.limit + 1);
  const items = rows.slice(0, filter.limit);
  return { items, nextCursor: rows.length > filter.limit ? (items.at(-1)?.id ?? null) : null };
}
