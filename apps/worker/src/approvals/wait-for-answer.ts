import { listPendingOutbox, outboxClaimId, readApproval, type ApprovalRow } from '@switchboard/db';
import type { ApprovalSignal } from '@switchboard/queue';
import { deliverPendingOutbox } from '../delivery/deliver-outbox.ts';
import type { ApprovalContext } from './approval-context.ts';

export type WaitOutcome = { kind: 'answered'; approval: ApprovalRow } | { kind: 'timeout' } | { kind: 'aborted' };

const defaultPollMs = 2_000;

/**
 * Waits for the question's answer: the gateway's signal, or the row re-read
 * every few seconds (so a lost signal only delays it), until the deadline
 * (APPROVAL_TIMEOUT_SECONDS) or the turn's signal (a /stop, an interrupt, a
 * shutdown). While it waits, replies the gateway queued for the conversation
 * (a refusal of someone who may not answer) are delivered at once: this turn
 * holds the conversation, so nobody else would send them before it ends.
 */
export function waitForAnswer(ctx: ApprovalContext, approval: ApprovalRow, signal: AbortSignal): Promise<WaitOutcome> {
  return new Promise((resolve) => {
    let done = false;
    let reading = false;
    const finish = (outcome: WaitOutcome) => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(deadline);
      signal.removeEventListener('abort', onAbort);
      unlisten?.();
      resolve(outcome);
    };
    const read = async () => {
      if (reading || done) return;
      reading = true;
      try {
        const row = await readApproval(ctx.db, approval.id);
        if (row && row.status !== 'pending') finish({ kind: 'answered', approval: row });
      } catch (err) {
        ctx.log.warn({ err, approvalId: approval.id }, 'approval not read; trying again');
      } finally {
        reading = false;
      }
    };
    const onSignal = (heard: ApprovalSignal) => {
      if (heard.kind === 'decided' && heard.approvalId === approval.id) void read();
      if (heard.kind === 'notice') void deliverQueuedReplies(ctx, approval.conversationId, approval.id);
    };
    const onAbort = () => finish({ kind: 'aborted' });
    const unlisten = ctx.approvalWaiters?.listen(approval.conversationId, onSignal);
    const poll = setInterval(() => void read(), ctx.approvalPollMs ?? defaultPollMs);
    const deadline = setTimeout(() => finish({ kind: 'timeout' }), ctx.config.APPROVAL_TIMEOUT_SECONDS * 1000);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
  });
}

/**
 * Sends the conversation's queued rows now (answers' lines and refusals), each
 * claimed first so that no other holding sends it too. Best effort: what is
 * left goes out after the turn, in order, as usual.
 */
export function deliverQueuedReplies(ctx: ApprovalContext, conversationId: number, approvalId: number): Promise<void> {
  // One delivery at a time per conversation: two at once would both hold this claim and could send a row twice.
  const next = (delivering.get(conversationId) ?? Promise.resolve()).then(() => deliverNow(ctx, conversationId, approvalId));
  delivering.set(conversationId, next);
  void next.finally(() => {
    if (delivering.get(conversationId) === next) delivering.delete(conversationId);
  });
  return next;
}

const delivering = new Map<number, Promise<void>>();

async function deliverNow(ctx: ApprovalContext, conversationId: number, approvalId: number): Promise<void> {
  try {
    const rows = await listPendingOutbox(ctx.db, conversationId);
    if (rows.length === 0) return;
    await deliverPendingOutbox({ db: ctx.db, senders: ctx.senders, log: ctx.log, claimId: outboxClaimId(ctx.workerId, `approval-${approvalId}`), deadAfterMs: ctx.config.WORKER_DEAD_AFTER_MS }, rows);
  } catch (err) {
    ctx.log.warn({ err, conversationId }, 'replies to an approval not delivered now; they go out after the turn');
  }
}
