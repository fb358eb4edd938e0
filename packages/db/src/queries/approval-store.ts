import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { approvals, type ApprovalStatus } from '../schema/approvals.ts';
import { outbox } from '../schema/outbox.ts';
import type { OutboxRow } from './table-rows.ts';

export type ApprovalRow = typeof approvals.$inferSelect;
export type ApprovalChoiceStatus = 'approved' | 'approved_for_session' | 'denied';

export interface ApprovalToAsk {
  conversationId: number;
  turnId: number;
  token: string;
  kind: ApprovalRow['kind'];
  summary: string;
  detail: string | null;
  askedOfUserKey: string | null;
  /** The question expires this long after the database's now(). */
  timeoutSeconds: number;
  /** A question too long to show whole is approved only by typing this code (issue 30, finding 4). */
  approveCode?: string | null;
}

/**
 * Stores a question as pending (docs/codex.md, "Approvals in chat"). A question an
 * older turn of the conversation left pending (its worker died while asking)
 * is cancelled first: one turn runs at a time, so it can never be answered
 * usefully, and the index allows one pending question per conversation.
 * `busy`: this turn already has a question pending (the caller asks one at a time).
 */
export async function insertApproval(db: Database, input: ApprovalToAsk): Promise<{ kind: 'asked'; approval: ApprovalRow } | { kind: 'busy' }> {
  return db.transaction(async (tx) => {
    await tx
      .update(approvals)
      .set({ status: 'cancelled', decidedVia: 'superseded', decidedAt: sql`now()` })
      .where(and(eq(approvals.conversationId, input.conversationId), eq(approvals.status, 'pending'), sql`${approvals.turnId} <> ${input.turnId}`));
    const [row] = await tx
      .insert(approvals)
      .values({
        conversationId: input.conversationId,
        turnId: input.turnId,
        token: input.token,
        kind: input.kind,
        summary: input.summary,
        detail: input.detail,
        askedOfUserKey: input.askedOfUserKey,
        approveCode: input.approveCode ?? null,
        expiresAt: sql`now() + ${input.timeoutSeconds}::int * interval '1 second'`,
      })
      .onConflictDoNothing()
      .returning();
    return row ? { kind: 'asked', approval: row } : { kind: 'busy' };
  });
}

/** A question granted without asking (CODEX_AUTO_APPROVE): stored decided, `auto`, for the transcript and the audit. */
export async function recordAutoApproval(db: Database, input: Omit<ApprovalToAsk, 'timeoutSeconds' | 'approveCode'>): Promise<ApprovalRow | undefined> {
  const [row] = await db
    .insert(approvals)
    .values({ ...input, status: 'approved', decidedVia: 'auto', expiresAt: sql`now()`, decidedAt: sql`now()` })
    .returning();
  return row;
}

/** Where the question was posted (platform message ids, the reply target), to answer and edit it later. */
export async function setApprovalQuestionRef(db: Database, id: number, questionRef: Record<string, unknown>): Promise<void> {
  await db.update(approvals).set({ questionRef }).where(eq(approvals.id, id));
}

export async function readApproval(db: Database, id: number): Promise<ApprovalRow | undefined> {
  const [row] = await db.select().from(approvals).where(eq(approvals.id, id));
  return row;
}

export interface ApprovalAnswer {
  /** A button names its question by token; a text command answers the conversation's pending question. */
  target: { token: string } | { conversationId: number };
  choice: ApprovalChoiceStatus;
  byUserKey: string;
  /** button, text */
  via: string;
  /** Users who may answer any question (APPROVERS). */
  approvers: readonly string[];
  /** The code typed with `/approve <code>`: what approves a question that has one (deny needs none). */
  code?: string;
}

/** What became of an answer; only `decided` changed anything. */
export type ApprovalDecision =
  | { kind: 'decided'; approval: ApprovalRow }
  | { kind: 'not_allowed'; approval: ApprovalRow }
  | { kind: 'already_decided'; approval: ApprovalRow }
  | { kind: 'expired'; approval: ApprovalRow }
  /** Allowed to answer, but approving this question takes its code (it was too long to show whole). */
  | { kind: 'code_required'; approval: ApprovalRow }
  | { kind: 'nothing_pending' };

/**
 * Decides a question in ONE statement: only while it is pending and not
 * expired, and only if the answering user is the one asked or an approver
 * (the rule of core's mayAnswerApproval, applied inside the update so two
 * answers racing each other end with exactly one decision). When nothing
 * changed, the question as it stands says why.
 */
export async function decideApproval(db: Database, answer: ApprovalAnswer): Promise<ApprovalDecision> {
  const target =
    'token' in answer.target
      ? eq(approvals.token, answer.target.token)
      : eq(approvals.id, sql`(select id from approvals where conversation_id = ${answer.target.conversationId} and status = 'pending' order by id desc limit 1)`);
  const allowed =
    answer.approvers.length > 0
      ? sql`(${approvals.askedOfUserKey} = ${answer.byUserKey} or ${inArray(sql`${answer.byUserKey}::text`, [...answer.approvers])})`
      : sql`${approvals.askedOfUserKey} = ${answer.byUserKey}`;
  // A question with an approve code is approved only with that code; a denial needs none.
  const coded = answer.choice === 'denied' ? sql`true` : sql`(${approvals.approveCode} is null or ${approvals.approveCode} = ${answer.code ?? null}::text)`;
  const [decided] = await db
    .update(approvals)
    .set({ status: answer.choice, decidedByUserKey: answer.byUserKey, decidedVia: answer.via, decidedAt: sql`now()` })
    .where(and(target, eq(approvals.status, 'pending'), sql`${approvals.expiresAt} > now()`, allowed, coded))
    .returning();
  if (decided) return { kind: 'decided', approval: decided };
  const [row] = await db
    .select({ approval: approvals, past: sql<boolean>`${approvals.expiresAt} <= now()` })
    .from(approvals)
    .where('token' in answer.target ? target : and(eq(approvals.conversationId, answer.target.conversationId), eq(approvals.status, 'pending')))
    .orderBy(desc(approvals.id))
    .limit(1);
  if (!row) return { kind: 'nothing_pending' };
  if (row.approval.status !== 'pending') return { kind: 'already_decided', approval: row.approval };
  if (row.past) return { kind: 'expired', approval: row.approval };
  const mayAnswer = row.approval.askedOfUserKey === answer.byUserKey || answer.approvers.includes(answer.byUserKey);
  return mayAnswer && row.approval.approveCode !== null ? { kind: 'code_required', approval: row.approval } : { kind: 'not_allowed', approval: row.approval };
}

/**
 * Closes a question nobody answered: `expired` (the deadline), `cancelled`
 * (a stop or an interrupt), `denied` (it could not be asked). Only while it is
 * pending: an answer that landed first wins, and is what this returns.
 */
export async function settleApproval(db: Database, id: number, status: Extract<ApprovalStatus, 'expired' | 'cancelled' | 'denied'>, via: string): Promise<ApprovalRow | undefined> {
  const [row] = await db
    .update(approvals)
    .set({ status, decidedVia: via, decidedAt: sql`now()` })
    .where(and(eq(approvals.id, id), eq(approvals.status, 'pending')))
    .returning();
  return row ?? (await readApproval(db, id));
}

/** A conversation's questions, oldest first, for the admin transcript; `turnIds` narrows them to those turns. */
export async function listApprovals(db: Database, conversationId: number, turnIds?: readonly number[]): Promise<ApprovalRow[]> {
  const where = turnIds === undefined ? eq(approvals.conversationId, conversationId) : and(eq(approvals.conversationId, conversationId), inArray(approvals.turnId, [...turnIds]));
  if (turnIds !== undefined && turnIds.length === 0) return [];
  return db.select().from(approvals).where(where).orderBy(asc(approvals.id));
}

/** Queues a one-line reply for a conversation that exists (an answer's acknowledgement or refusal); returns the row's id. */
export async function queueConversationNotice(db: Database, input: { conversationId: number; platform: string; target: Record<string, unknown>; text: string }): Promise<number> {
  const [row] = await db.insert(outbox).values({ conversationId: input.conversationId, platform: input.platform, target: input.target, text: input.text }).returning({ id: outbox.id });
  return Number(row?.id);
}

/** The conversation's rows still to send, oldest first (what a worker waiting on a question delivers at once). */
export async function listPendingOutbox(db: Database, conversationId: number): Promise<OutboxRow[]> {
  return db.select().from(outbox).where(and(eq(outbox.conversationId, conversationId), eq(outbox.status, 'pending'))).orderBy(asc(outbox.id));
}
