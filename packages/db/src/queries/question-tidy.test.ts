import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { approvals } from '../schema/approvals.ts';
import { turns } from '../schema/turns.ts';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { insertApproval, settleApproval, setApprovalQuestionRef } from './approval-store.ts';
import { claimUntidiedQuestions, markQuestionTidied, releaseQuestionTidy } from './question-tidy.ts';
import { storeInboundEvent } from './store-inbound.ts';

const db = useTestDbClient({ max: 4 });
let tokens = 0;

/** A conversation with one turn in `status`, and a question that turn posted (message `m<id>`). */
async function postedQuestion(chatId: string, turnStatus: 'running' | 'completed' | 'interrupted') {
  const { conversationId } = await storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: '1', eventId: `ev-${chatId}`, conversationKey: `telegram:1:${chatId}::`, chatId, threadId: '', userScope: '',
    userId: '42', text: 'run the build', replyTarget: { chatId: Number(chatId) }, refuseAtPending: null,
  });
  const [turn] = await db.client.db.insert(turns).values({ conversationId, sessionId: 1, status: turnStatus }).returning();
  const asked = await insertApproval(db.client.db, {
    conversationId, turnId: Number(turn?.id), token: `tidy${String(++tokens).padStart(8, '0')}`, kind: 'command', summary: 'run `make`', detail: null,
    askedOfUserKey: 'telegram:1:42', timeoutSeconds: 60,
  });
  if (asked.kind !== 'asked') throw new Error('not asked');
  await setApprovalQuestionRef(db.client.db, asked.approval.id, { target: { chatId: Number(chatId) }, platformMessageId: `m${asked.approval.id}` });
  return { conversationId, turnId: Number(turn?.id), approval: asked.approval };
}

const claimedIds = async () => (await claimUntidiedQuestions(db.client.db, 100)).map((q) => q.id);

describe('claimUntidiedQuestions (a question whose asking turn died keeps no buttons)', () => {
  it('claims a settled question of a turn that no longer runs, once, with what the edit needs', async () => {
    const { approval, conversationId } = await postedQuestion('201', 'interrupted');
    await settleApproval(db.client.db, approval.id, 'cancelled', 'superseded');
    const [claimed, ...rest] = await claimUntidiedQuestions(db.client.db, 100);
    expect(rest).toEqual([]);
    expect(claimed).toMatchObject({ id: approval.id, conversationId, platform: 'telegram', status: 'cancelled', kind: 'command', summary: 'run `make`', target: { chatId: 201 }, platformMessageId: `m${approval.id}` });
    // A second sweeper finds nothing.
    expect(await claimedIds()).toEqual([]);
    // A failed edit gives it back.
    await releaseQuestionTidy(db.client.db, approval.id);
    expect(await claimedIds()).toEqual([approval.id]);
  });

  it('leaves a running turn its own question, and a question its turn already edited', async () => {
    const running = await postedQuestion('202', 'running');
    await settleApproval(db.client.db, running.approval.id, 'denied', 'button');
    const edited = await postedQuestion('203', 'completed');
    await settleApproval(db.client.db, edited.approval.id, 'denied', 'button');
    await markQuestionTidied(db.client.db, edited.approval.id);
    const open = await postedQuestion('204', 'interrupted');
    expect(await claimedIds()).toEqual([]);
    expect((await db.client.db.select().from(approvals).where(eq(approvals.id, open.approval.id)))[0]?.status).toBe('pending');
  });

  it('closes a pending question past its deadline whose turn died as expired', async () => {
    const { approval } = await postedQuestion('205', 'interrupted');
    await db.client.db.update(approvals).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(approvals.id, approval.id));
    expect(await claimUntidiedQuestions(db.client.db, 100)).toEqual([expect.objectContaining({ id: approval.id, status: 'expired' })]);
    expect((await db.client.db.select().from(approvals).where(eq(approvals.id, approval.id)))[0]).toMatchObject({ status: 'expired', decidedVia: 'timeout' });
  });
});
