import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { decideApproval, insertApproval, listApprovals, readApproval, settleApproval, type ApprovalToAsk } from './approval-store.ts';
import { storeInboundEvent } from './store-inbound.ts';

const db = useTestDbClient({ max: 4 });
const asked = 'telegram:1:42';
let tokens = 0;

async function conversation(chatId: string): Promise<number> {
  const stored = await storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: '1', eventId: `ev-${chatId}`, conversationKey: `telegram:1:${chatId}::`, chatId, threadId: '', userScope: '',
    userId: '42', text: 'run the build', replyTarget: { chatId: Number(chatId) }, refuseAtPending: null,
  });
  return stored.conversationId;
}

const question = (conversationId: number, over: Partial<ApprovalToAsk> = {}): ApprovalToAsk => ({
  conversationId, turnId: 10, token: `tok${String(++tokens).padStart(8, '0')}`, kind: 'command', summary: 'run `make`', detail: 'make\nin /work',
  askedOfUserKey: asked, timeoutSeconds: 60, ...over,
});

async function ask(input: ApprovalToAsk) {
  const result = await insertApproval(db.client.db, input);
  if (result.kind !== 'asked') throw new Error('not asked');
  return result.approval;
}

describe('decideApproval', () => {
  it('lets the asking user decide once, by token; a second answer changes nothing', async () => {
    const approval = await ask(question(await conversation('101')));
    const first = await decideApproval(db.client.db, { target: { token: approval.token }, choice: 'approved', byUserKey: asked, via: 'button', approvers: [] });
    expect(first).toMatchObject({ kind: 'decided', approval: { status: 'approved', decidedByUserKey: asked, decidedVia: 'button' } });
    const second = await decideApproval(db.client.db, { target: { token: approval.token }, choice: 'denied', byUserKey: asked, via: 'button', approvers: [] });
    expect(second).toMatchObject({ kind: 'already_decided', approval: { status: 'approved' } });
    expect((await readApproval(db.client.db, approval.id))?.status).toBe('approved');
  });

  it('refuses anyone else, unless an approver, and leaves the question pending', async () => {
    const conversationId = await conversation('102');
    const approval = await ask(question(conversationId));
    const stranger = await decideApproval(db.client.db, { target: { token: approval.token }, choice: 'approved', byUserKey: 'telegram:1:99', via: 'button', approvers: ['slack:T1:U1'] });
    expect(stranger).toMatchObject({ kind: 'not_allowed', approval: { status: 'pending' } });
    expect((await readApproval(db.client.db, approval.id))?.status).toBe('pending');
    const approver = await decideApproval(db.client.db, { target: { conversationId }, choice: 'denied', byUserKey: 'telegram:1:99', via: 'text', approvers: ['telegram:1:99'] });
    expect(approver).toMatchObject({ kind: 'decided', approval: { status: 'denied', decidedByUserKey: 'telegram:1:99', decidedVia: 'text' } });
  });

  it('a question with an approve code is approved only with that code, by button never; a denial needs none (issue 30, finding 4)', async () => {
    const conversationId = await conversation('104');
    const approval = await ask(question(conversationId, { approveCode: '004217' }));
    const decide = (over: { choice?: 'approved' | 'approved_for_session' | 'denied'; code?: string; via?: string }) =>
      decideApproval(db.client.db, { target: over.via === 'button' ? { token: approval.token } : { conversationId }, choice: over.choice ?? 'approved', byUserKey: asked, via: over.via ?? 'text', approvers: [], ...(over.code ? { code: over.code } : {}) });
    expect(await decide({ via: 'button' })).toMatchObject({ kind: 'code_required', approval: { status: 'pending' } });
    expect(await decide({})).toMatchObject({ kind: 'code_required' });
    expect(await decide({ choice: 'approved_for_session', code: '999999' })).toMatchObject({ kind: 'code_required' });
    // A stranger with the right code is still not the asked user.
    expect(await decideApproval(db.client.db, { target: { conversationId }, choice: 'approved', byUserKey: 'telegram:1:99', via: 'text', approvers: [], code: '004217' })).toMatchObject({ kind: 'not_allowed' });
    expect((await readApproval(db.client.db, approval.id))?.status).toBe('pending');
    expect(await decide({ choice: 'approved_for_session', code: '004217' })).toMatchObject({ kind: 'decided', approval: { status: 'approved_for_session' } });

    const other = await ask(question(await conversation('105'), { approveCode: '111111' }));
    expect(await decideApproval(db.client.db, { target: { token: other.token }, choice: 'denied', byUserKey: asked, via: 'button', approvers: [] })).toMatchObject({ kind: 'decided', approval: { status: 'denied' } });
  });

  it('answers by conversation only the pending question, and says when there is none', async () => {
    const conversationId = await conversation('103');
    expect(await decideApproval(db.client.db, { target: { conversationId }, choice: 'approved', byUserKey: asked, via: 'text', approvers: [] })).toEqual({ kind: 'nothing_pending' });
    expect(await decideApproval(db.client.db, { target: { token: 'tokUnknown000' }, choice: 'approved', byUserKey: asked, via: 'button', approvers: [] })).toEqual({ kind: 'nothing_pending' });
    const approval = await ask(question(conversationId, { askedOfUserKey: null }));
    // Nobody was named: only approvers may answer.
    expect(await decideApproval(db.client.db, { target: { conversationId }, choice: 'approved', byUserKey: asked, via: 'text', approvers: [] })).toMatchObject({ kind: 'not_allowed' });
    expect(await decideApproval(db.client.db, { target: { conversationId }, choice: 'approved_for_session', byUserKey: asked, via: 'text', approvers: [asked] })).toMatchObject({
      kind: 'decided',
      approval: { id: approval.id, status: 'approved_for_session' },
    });
  });

  it('refuses an answer after the deadline', async () => {
    const approval = await ask(question(await conversation('104')));
    await db.client.db.$client`update approvals set expires_at = now() - interval '1 second' where id = ${approval.id}`;
    expect(await decideApproval(db.client.db, { target: { token: approval.token }, choice: 'approved', byUserKey: asked, via: 'button', approvers: [] })).toMatchObject({ kind: 'expired' });
    expect((await readApproval(db.client.db, approval.id))?.status).toBe('pending');
  });

  it('ends with exactly one decision when two answers race', async () => {
    const approval = await ask(question(await conversation('105')));
    const answers = await Promise.all(
      (['approved', 'denied', 'approved_for_session', 'denied'] as const).map((choice) =>
        decideApproval(db.client.db, { target: { token: approval.token }, choice, byUserKey: asked, via: 'button', approvers: [] }),
      ),
    );
    expect(answers.filter((answer) => answer.kind === 'decided')).toHaveLength(1);
    expect(answers.filter((answer) => answer.kind === 'already_decided')).toHaveLength(3);
  });
});

describe('insertApproval and settleApproval', () => {
  it('keeps one pending question per conversation: an older turn’s is cancelled, the same turn’s is busy', async () => {
    const conversationId = await conversation('106');
    const old = await ask(question(conversationId, { turnId: 1 }));
    const current = await ask(question(conversationId, { turnId: 2 }));
    expect((await readApproval(db.client.db, old.id))).toMatchObject({ status: 'cancelled', decidedVia: 'superseded' });
    expect(await insertApproval(db.client.db, question(conversationId, { turnId: 2 }))).toEqual({ kind: 'busy' });
    expect((await listApprovals(db.client.db, conversationId)).map((row) => [row.id, row.status])).toEqual([
      [old.id, 'cancelled'],
      [current.id, 'pending'],
    ]);
    expect(await listApprovals(db.client.db, conversationId, [2])).toHaveLength(1);
  });

  it('settles only a pending question: an answer that came first wins', async () => {
    const conversationId = await conversation('107');
    const approval = await ask(question(conversationId));
    expect(await settleApproval(db.client.db, approval.id, 'expired', 'timeout')).toMatchObject({ status: 'expired', decidedVia: 'timeout' });
    const answered = await ask(question(conversationId, { turnId: 11 }));
    await decideApproval(db.client.db, { target: { token: answered.token }, choice: 'denied', byUserKey: asked, via: 'button', approvers: [] });
    expect(await settleApproval(db.client.db, answered.id, 'cancelled', 'stop')).toMatchObject({ status: 'denied', decidedVia: 'button' });
  });
});
