import { eq, sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { approvals, type ApprovalStatus } from '../schema/approvals.ts';

/**
 * A posted approval question still showing its buttons after it was settled
 * (docs/codex.md, "Approvals in chat"). The asking turn edits its question
 * once it is settled; when that turn's worker died while the question was
 * open, nobody would: the question is later answered by a press, superseded
 * by the next turn's question or simply runs out, and its buttons stayed
 * (issue 29, found by the scenario test, SEED=505 and SEED=606).
 */
export interface UntidiedQuestion {
  id: number;
  conversationId: number;
  platform: string;
  status: ApprovalStatus;
  kind: 'command' | 'file_change' | 'other';
  summary: string;
  detail: string | null;
  approveCode: string | null;
  target: Record<string, unknown>;
  platformMessageId: string;
}

/** The asking turn edited its question: the sweep has nothing left to do for it. */
export async function markQuestionTidied(db: Database, id: number): Promise<void> {
  await db.update(approvals).set({ questionTidiedAt: sql`now()` }).where(eq(approvals.id, id));
}

/**
 * Claims, in one statement, questions owed their edit whose asking turn no
 * longer runs (so it will never edit them itself): settled ones, and pending
 * ones past their deadline, which are closed `expired` here (their turn is
 * gone, nobody else would). The claim is the mark itself, so two sweeping
 * workers never edit one question; `releaseQuestionTidy` gives back one
 * whose edit failed. Questions settled more than an hour ago are left as
 * they are: a message that cannot be edited is not retried for ever.
 */
export async function claimUntidiedQuestions(db: Database, limit: number): Promise<UntidiedQuestion[]> {
  const rows = await db.$client<UntidiedQuestion[]>`
    with owed as (
      select a.id from approvals a
      join turns t on t.id = a.turn_id
      where a.question_tidied_at is null
        and a.question_ref ? 'platformMessageId'
        and t.status <> 'running'
        and (a.status <> 'pending' or a.expires_at < now())
        and coalesce(a.decided_at, a.expires_at) > now() - interval '1 hour'
      order by a.id
      limit ${limit}
      for update of a skip locked
    )
    update approvals a set
      question_tidied_at = now(),
      status = case when a.status = 'pending' then 'expired' else a.status end,
      decided_via = case when a.status = 'pending' then 'timeout' else a.decided_via end,
      decided_at = coalesce(a.decided_at, now())
    from owed, conversations c
    where a.id = owed.id and c.id = a.conversation_id
    returning a.id::int as id, a.conversation_id::int as "conversationId", c.platform, a.status, a.kind, a.summary, a.detail,
      a.approve_code as "approveCode", a.question_ref->'target' as target, a.question_ref->>'platformMessageId' as "platformMessageId"`;
  return [...rows];
}

/** An edit that failed: owed again, for the next sweep. */
export async function releaseQuestionTidy(db: Database, id: number): Promise<void> {
  await db.update(approvals).set({ questionTidiedAt: null }).where(eq(approvals.id, id));
}
