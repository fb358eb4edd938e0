import { randomBytes, randomInt } from 'node:crypto';
import type { ApprovalAnswer, ApprovalQuestion, AskUser } from '@switchboard/agent';
import { approvalButtons, approvalQuestionIsCut, approvalReplies, describeApprovalOutcome, encodeApprovalPayload, formatApproveCode, renderAnsweredQuestion, renderApprovalQuestion } from '@switchboard/core';
import { insertApproval, markQuestionTidied, recordAutoApproval, setApprovalQuestionRef, settleApproval, type ApprovalRow } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { ApprovalContext } from './approval-context.ts';
import { deliverQueuedReplies, waitForAnswer, type WaitOutcome } from './wait-for-answer.ts';

/** The turn that asks: where to ask, and who may answer (turns.user_key of its first input). */
export interface ApprovalTurn {
  conversationId: number;
  turnId: number;
  platform: string;
  replyTarget: Record<string, unknown>;
  askedOfUserKey: string | null;
}

/**
 * The runtime's `askUser` for one turn (docs/codex.md, "Approvals in chat"): asks in
 * the conversation, one question at a time, and resolves with the answer.
 * Never throws: an error anywhere is `unanswered`, which the runtime takes as
 * a refusal (fail closed).
 */
export function createChatAskUser(ctx: ApprovalContext, turn: ApprovalTurn): AskUser {
  let previous: Promise<unknown> = Promise.resolve();
  return (question, signal) => {
    const asked = previous.then(() => askOnce(ctx, turn, question, signal));
    previous = asked.catch(() => undefined);
    return asked;
  };
}

async function askOnce(ctx: ApprovalContext, turn: ApprovalTurn, question: ApprovalQuestion, signal: AbortSignal): Promise<ApprovalAnswer> {
  const log = ctx.log.child({ conversationId: turn.conversationId, turnId: turn.turnId });
  const stored = { conversationId: turn.conversationId, turnId: turn.turnId, token: randomBytes(16).toString('base64url'), kind: question.kind, summary: question.summary, detail: question.detail ?? null, askedOfUserKey: turn.askedOfUserKey };
  try {
    if (ctx.config.CODEX_AUTO_APPROVE === 'on') {
      await recordAutoApproval(ctx.db, stored);
      return { decision: 'approved' };
    }
    if (signal.aborted) return { decision: 'cancelled' };
    // Too long to show whole: approved only by typing a code, never with one tap (issue 30, finding 4).
    const approveCode = approvalQuestionIsCut(stored) ? formatApproveCode(randomInt(1_000_000)) : null;
    const inserted = await insertApproval(ctx.db, { ...stored, approveCode, timeoutSeconds: ctx.config.APPROVAL_TIMEOUT_SECONDS });
    if (inserted.kind === 'busy') return { decision: 'unanswered' };
    const posted = await postQuestion(ctx, turn, inserted.approval, log);
    if (!posted) return { decision: 'unanswered' };
    const outcome = await waitForAnswer(ctx, inserted.approval, signal);
    return await concludeQuestion(ctx, { turn, asked: inserted.approval, messageId: posted, log }, outcome);
  } catch (err) {
    log.warn({ err }, 'approval could not be asked or read; declined');
    return { decision: 'unanswered' };
  }
}

/** The question with its buttons; the platform's message id, or undefined when it could not be asked (then the row is closed `denied`). */
async function postQuestion(ctx: ApprovalContext, turn: ApprovalTurn, approval: ApprovalRow, log: Logger): Promise<string | undefined> {
  const sender = ctx.senders.get(turn.platform);
  const text = renderApprovalQuestion(approval);
  // A question with an approve code offers Deny only: approving it takes typing the code.
  const offered = approval.approveCode ? approvalButtons.filter(({ choice }) => choice === 'denied') : approvalButtons;
  const buttons = offered.map(({ choice, label }) => ({
    label,
    payload: encodeApprovalPayload(approval.token, choice),
    ...(choice === 'approved' ? { style: 'primary' as const } : choice === 'denied' ? { style: 'danger' as const } : {}),
  }));
  try {
    if (!sender) throw new Error(`platform ${turn.platform} is not configured`);
    // Without buttons on a platform, the text commands still answer it.
    const sent = sender.sendWithButtons ? await sender.sendWithButtons(turn.replyTarget, text, buttons) : await sender.sendText(turn.replyTarget, text, { partIndex: 1 });
    await setApprovalQuestionRef(ctx.db, approval.id, { target: turn.replyTarget, platformMessageId: sent.platformMessageId });
    return sent.platformMessageId;
  } catch (err) {
    log.warn({ err, platform: turn.platform }, 'approval question could not be posted; declined');
    await settleApproval(ctx.db, approval.id, 'denied', 'not_asked');
    return undefined;
  }
}

/** A question posted in the chat: the turn that asked, its row, the platform's message id, and the turn's log. */
interface PostedQuestion {
  turn: ApprovalTurn;
  asked: ApprovalRow;
  messageId: string;
  log: Logger;
}

/** Closes what nobody answered, edits the question (its buttons go) and maps the row to the runtime's answer. */
async function concludeQuestion(ctx: ApprovalContext, question: PostedQuestion, outcome: WaitOutcome): Promise<ApprovalAnswer> {
  const { turn, asked, messageId, log } = question;
  const row =
    outcome.kind === 'answered'
      ? outcome.approval
      : await settleApproval(ctx.db, asked.id, outcome.kind === 'timeout' ? 'expired' : 'cancelled', outcome.kind === 'timeout' ? 'timeout' : 'cancelled');
  const status = outcome.kind === 'aborted' ? 'cancelled' : (row?.status ?? 'expired');
  const sender = ctx.senders.get(turn.platform);
  try {
    // An answer's own line ("Approved by …") is in the outbox, queued by the gateway; it goes out now, before the turn goes on.
    if (status !== 'expired' && status !== 'cancelled') await deliverQueuedReplies(ctx, turn.conversationId, asked.id);
    if (sender?.replaceText) {
      await sender.replaceText(turn.replyTarget, messageId, renderAnsweredQuestion(asked, describeApprovalOutcome(status)));
      await markQuestionTidied(ctx.db, asked.id);
    }
    if (status === 'expired') await sender?.sendText(turn.replyTarget, approvalReplies.timedOut, { partIndex: 1 });
  } catch (err) {
    log.warn({ err, status }, 'approval outcome not shown in the chat');
  }
  return toAnswer(status);
}

function toAnswer(status: ApprovalRow['status']): ApprovalAnswer {
  switch (status) {
    case 'approved':
    case 'approved_for_session':
    case 'denied':
    case 'cancelled':
      return { decision: status };
    default:
      return { decision: 'unanswered' };
  }
}
