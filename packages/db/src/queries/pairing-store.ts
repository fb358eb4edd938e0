import { and, asc, desc, eq, gt, lte, max, sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { AdvisoryLock } from '../lock-ids.ts';
import { conversations } from '../schema/conversations.ts';
import { outbox } from '../schema/outbox.ts';
import { pairedUsers, pairings } from '../schema/pairings.ts';
import type { DbExecutor } from './admin-executor.ts';

/** What the pairing rules (@switchboard/core decidePairingRequest) are given, read under the platform's lock. */
export interface PairingRequestState {
  pending: { code: string; expiresAt: Date; lastToldAt: Date } | null;
  pendingOnPlatform: number;
  deniedAt: Date | null;
  now: Date;
}

export type PairingRequestDecision =
  | { kind: 'issue'; expiresAt: Date }
  | { kind: 'evict_oldest'; expiresAt: Date }
  | { kind: 'remind'; code: string; expiresAt: Date }
  | { kind: 'quiet' }
  | { kind: 'denied' };

export interface PairingRequestInput {
  platform: string;
  accountId: string;
  userId: string;
  /** The user's direct conversation, created if this is their first message. */
  conversation: { key: string; chatId: string; threadId: string; userScope: string };
  target: Record<string, unknown>;
  decide: (state: PairingRequestState) => PairingRequestDecision;
  newCode: () => string;
  /** The line that carries the code to the user. */
  render: (code: string, expiresAt: Date, now: Date) => string;
}

export type PairingRequestOutcome = { kind: 'issued' | 'reminded'; code: string; conversationId: number } | { kind: 'quiet' } | { kind: 'denied' };

/**
 * A message from a user who needs pairing: under a per-platform advisory lock
 * (so the cap and one code per user hold across gateways), expire the
 * platform's stale codes, then issue, remind or stay quiet as `decide` says.
 * The code's message goes into the outbox in the same transaction as the
 * pairing row, so it is sent once and never lost (the worker delivers it; the
 * recovery sweep does if the wake-up is lost). A code collision (31^8 codes)
 * fails the unique constraint and the transaction: the platform re-delivers.
 */
export async function requestPairing(db: Database, input: PairingRequestInput): Promise<PairingRequestOutcome> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${AdvisoryLock.PairingPlatform}, hashtext(${input.platform}))`);
    const now = await databaseNow(tx);
    await tx
      .update(pairings)
      .set({ status: 'expired' })
      .where(and(eq(pairings.platform, input.platform), eq(pairings.status, 'pending'), lte(pairings.expiresAt, now)));
    const pending = await tx
      .select({ id: pairings.id, userId: pairings.userId, code: pairings.code, expiresAt: pairings.expiresAt, lastToldAt: pairings.lastToldAt, conversationId: pairings.conversationId })
      .from(pairings)
      .where(and(eq(pairings.platform, input.platform), eq(pairings.status, 'pending')))
      .orderBy(asc(pairings.requestedAt), asc(pairings.id));
    const mine = pending.find((row) => row.userId === input.userId) ?? null;
    const [denied] = await tx
      .select({ at: max(pairings.decidedAt) })
      .from(pairings)
      .where(and(eq(pairings.platform, input.platform), eq(pairings.userId, input.userId), eq(pairings.status, 'denied')));
    const decision = input.decide({ pending: mine, pendingOnPlatform: pending.length, deniedAt: denied?.at ?? null, now });
    if (decision.kind === 'quiet' || decision.kind === 'denied') return { kind: decision.kind };
    if (decision.kind === 'remind') {
      if (!mine) throw new Error('pairing rules reminded a user who has no pending code');
      await tx.update(pairings).set({ lastToldAt: now, target: input.target }).where(eq(pairings.id, mine.id));
      await tx.insert(outbox).values({ conversationId: mine.conversationId, platform: input.platform, target: input.target, text: input.render(mine.code, mine.expiresAt, now) });
      return { kind: 'reminded', code: mine.code, conversationId: mine.conversationId };
    }
    const expiresAt = decision.expiresAt;
    const oldest = pending[0];
    if (decision.kind === 'evict_oldest' && oldest) await tx.update(pairings).set({ status: 'evicted', decidedAt: now }).where(eq(pairings.id, oldest.id));
    const [conversation] = await tx
      .insert(conversations)
      .values({ key: input.conversation.key, platform: input.platform, accountId: input.accountId, chatId: input.conversation.chatId, threadId: input.conversation.threadId, userScope: input.conversation.userScope })
      .onConflictDoUpdate({ target: conversations.key, set: { updatedAt: sql`now()` } })
      .returning({ id: conversations.id });
    if (!conversation) throw new Error('conversation upsert returned nothing');
    const code = input.newCode();
    await tx.insert(pairings).values({
      platform: input.platform,
      accountId: input.accountId,
      userId: input.userId,
      code,
      conversationId: conversation.id,
      target: input.target,
      expiresAt,
      lastToldAt: now,
    });
    await tx.insert(outbox).values({ conversationId: conversation.id, platform: input.platform, target: input.target, text: input.render(code, expiresAt, now) });
    return { kind: 'issued', code, conversationId: conversation.id };
  });
}

/** Whether an operator paired this user (and did not revoke them since). */
export async function isPairedUser(db: Database, platform: string, userId: string): Promise<boolean> {
  const rows = await db
    .select({ userId: pairedUsers.userId })
    .from(pairedUsers)
    .where(and(eq(pairedUsers.platform, platform), eq(pairedUsers.userId, userId)))
    .limit(1);
  return rows.length > 0;
}

export type ApprovePairingOutcome = { kind: 'approved'; platform: string; userId: string; conversationId: number } | { kind: 'not_found' } | { kind: 'expired'; platform: string; userId: string };

/**
 * Approves a pending code: the user joins paired_users, the code is spent, and
 * `text` is queued for the user, all in one transaction with the caller's
 * audit row (`record`, called for every outcome). An expired code is marked
 * so and not approved; an unknown or already approved one changes nothing.
 */
export async function approvePairing(
  db: Database,
  input: { code: string; actor: string; text: string; record: (tx: DbExecutor, outcome: ApprovePairingOutcome) => Promise<void> },
): Promise<ApprovePairingOutcome> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(pairings).where(eq(pairings.code, input.code)).for('update');
    const now = await databaseNow(tx);
    let outcome: ApprovePairingOutcome;
    if (!row || row.status === 'approved' || row.status === 'denied') outcome = { kind: 'not_found' };
    else if (row.status !== 'pending' || row.expiresAt.getTime() <= now.getTime()) {
      if (row.status === 'pending') await tx.update(pairings).set({ status: 'expired' }).where(eq(pairings.id, row.id));
      outcome = { kind: 'expired', platform: row.platform, userId: row.userId };
    } else {
      await tx.insert(pairedUsers).values({ platform: row.platform, userId: row.userId, code: row.code, approvedBy: input.actor }).onConflictDoNothing();
      await tx.update(pairings).set({ status: 'approved', decidedAt: now, decidedBy: input.actor }).where(eq(pairings.id, row.id));
      await tx.insert(outbox).values({ conversationId: row.conversationId, platform: row.platform, target: row.target, text: input.text });
      outcome = { kind: 'approved', platform: row.platform, userId: row.userId, conversationId: row.conversationId };
    }
    await input.record(tx, outcome);
    return outcome;
  });
}

export type DenyPairingOutcome = { kind: 'denied'; platform: string; userId: string } | { kind: 'not_found' };

/**
 * Denies a pending code (issue 30, finding 7): the code stops working and the
 * user gets no new one for a day (core's pairingRules.deniedForMs), however
 * often they ask; a squatter's slot is free at once. Nothing is sent to the
 * user now; their next message gets the one-line refusal. Audited in the same
 * transaction (`record`, called for every outcome).
 */
export async function denyPairing(
  db: Database,
  input: { code: string; actor: string; record: (tx: DbExecutor, outcome: DenyPairingOutcome) => Promise<void> },
): Promise<DenyPairingOutcome> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(pairings)
      .set({ status: 'denied', decidedAt: sql`now()`, decidedBy: input.actor })
      .where(and(eq(pairings.code, input.code), eq(pairings.status, 'pending')))
      .returning({ platform: pairings.platform, userId: pairings.userId });
    const outcome: DenyPairingOutcome = row ? { kind: 'denied', ...row } : { kind: 'not_found' };
    await input.record(tx, outcome);
    return outcome;
  });
}

export type RevokePairedUserOutcome = { kind: 'revoked'; code: string; approvedBy: string } | { kind: 'not_found' };

/** Removes a paired user: their next direct message is an unknown user's again. Audited in the same transaction (`record`). */
export async function revokePairedUser(
  db: Database,
  input: { platform: string; userId: string; record: (tx: DbExecutor, outcome: RevokePairedUserOutcome) => Promise<void> },
): Promise<RevokePairedUserOutcome> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .delete(pairedUsers)
      .where(and(eq(pairedUsers.platform, input.platform), eq(pairedUsers.userId, input.userId)))
      .returning({ code: pairedUsers.code, approvedBy: pairedUsers.approvedBy });
    const outcome: RevokePairedUserOutcome = row ? { kind: 'revoked', ...row } : { kind: 'not_found' };
    await input.record(tx, outcome);
    return outcome;
  });
}

export interface PendingPairing {
  code: string;
  platform: string;
  accountId: string;
  userId: string;
  requestedAt: Date;
  expiresAt: Date;
}

/** Codes an operator can still approve, oldest first. */
export async function listPendingPairings(db: DbExecutor, limit: number): Promise<PendingPairing[]> {
  return db
    .select({ code: pairings.code, platform: pairings.platform, accountId: pairings.accountId, userId: pairings.userId, requestedAt: pairings.requestedAt, expiresAt: pairings.expiresAt })
    .from(pairings)
    .where(and(eq(pairings.status, 'pending'), gt(pairings.expiresAt, sql`now()`)))
    .orderBy(asc(pairings.requestedAt))
    .limit(limit);
}

export type PairedUser = typeof pairedUsers.$inferSelect;

/** Paired users, newest first. */
export async function listPairedUsers(db: DbExecutor, limit: number): Promise<PairedUser[]> {
  return db.select().from(pairedUsers).orderBy(desc(pairedUsers.pairedAt)).limit(limit);
}

/** Postgres's clock: expiry is judged by one clock whichever gateway asks. */
async function databaseNow(tx: DbExecutor): Promise<Date> {
  const rows = await tx.execute<{ now: Date | string }>(sql`select now() as now`);
  const value = (rows as unknown as { now: Date | string }[])[0]?.now;
  return value instanceof Date ? value : new Date(String(value));
}
