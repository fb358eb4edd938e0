import { and, desc, eq, lt, type SQL } from 'drizzle-orm';
import { auditLog } from '../schema/audit-log.ts';
import type { DbExecutor } from './admin-executor.ts';

export type AuditEntry = typeof auditLog.$inferSelect;

export interface NewAuditEntry {
  /** The admin token's name. */
  actor: string;
  action: string;
  /** e.g. `conversation:42`, `outbox:7`, `job:turns/ev-9`. */
  target: string;
  /** `ok` or the error code the caller answered with. */
  result: string;
  detail?: Record<string, unknown>;
  clientAddress?: string;
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  target?: string;
  cursor?: number;
  limit: number;
}

export async function recordAuditEntry(db: DbExecutor, entry: NewAuditEntry): Promise<number> {
  const [row] = await db
    .insert(auditLog)
    .values({ ...entry, detail: entry.detail ?? null, clientAddress: entry.clientAddress ?? null })
    .returning({ id: auditLog.id });
  if (!row) throw new Error('audit insert returned nothing');
  return row.id;
}

/** The audit log, newest first. */
export async function listAuditEntries(db: DbExecutor, filter: AuditFilter): Promise<{ items: AuditEntry[]; nextCursor: number | null }> {
  const where: SQL[] = [];
  if (filter.actor) where.push(eq(auditLog.actor, filter.actor));
  if (filter.action) where.push(eq(auditLog.action, filter.action));
  if (filter.target) where.push(eq(auditLog.target, filter.target));
  if (filter.cursor !== undefined) where.push(lt(auditLog.id, filter.cursor));
  const rows = await db
    .select()
    .from(auditLog)
    .where(and(...where))
    .orderBy(desc(auditLog.id))
    .limit(filter.limit + 1);
  const items = rows.slice(0, filter.limit);
  return { items, nextCursor: rows.length > filter.limit ? (items.at(-1)?.id ?? null) : null };
}
