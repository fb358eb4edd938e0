import {
  approvalReplies,
  parseApprovalCommand,
  parseApprovalPayload,
  renderApprovalDecision,
  renderNotAllowed,
  userKeyOf,
  type ChatCommand,
} from '@switchboard/core';
import { decideApproval, queueConversationNotice, storeInboundEvent, type ApprovalDecision, type ApprovalRow, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { ButtonPress, InboundMessage } from '@switchboard/platforms';
import { enqueueWake, publishApprovalSignal, type TurnQueue } from '@switchboard/queue';
import type { RedisClient } from '@switchboard/queue';
import { inboundToStore } from '../ingress/inbound-to-store.ts';

/** What answering needs: the store, the signal to the waiting worker, who may answer besides the asked user. */
export interface ApprovalDeps {
  db: Database;
  queue: TurnQueue;
  redis: RedisClient;
  redisPrefix: string;
  /** APPROVERS: `platform:account:user` keys. */
  approvers: readonly string[];
  log: Logger;
}

/**
 * What became of a button press, as a value each door maps to its own answer
 * (answerCallbackQuery, a Slack response_url, a Discord interaction response).
 * `text`: a short line for the presser. `questionText`: the question as it
 * should now read (its buttons gone), when it was decided.
 */
export type PressOutcome =
  | { kind: 'decided'; text: string; approval: ApprovalRow }
  | { kind: 'refused'; reason: 'not_allowed' | 'already_decided' | 'expired' | 'code_required' | 'nothing_pending' | 'not_ours'; text: string };

/**
 * An Approve / Approve for session / Deny button (docs/codex.md, "Approvals in chat"):
 * decided here, in one statement, only by the asked user or an approver; the
 * chat is told who decided (a line in the outbox, to the question's target)
 * and the worker waiting on the question is signalled.
 */
export async function answerButtonPress(deps: ApprovalDeps, press: ButtonPress): Promise<PressOutcome> {
  const parsed = parseApprovalPayload(press.payload);
  if (!parsed) return { kind: 'refused', reason: 'not_ours', text: 'This button is no longer in use.' };
  const decision = await decideApproval(deps.db, {
    target: { token: parsed.token },
    choice: parsed.choice,
    byUserKey: userKeyOf(press.platform, press.accountId, press.userId),
    via: 'button',
    approvers: deps.approvers,
  });
  if (decision.kind !== 'decided') return { kind: 'refused', reason: decision.kind, text: refusalText(decision) };
  const line = renderApprovalDecision(parsed.choice, press.userId);
  const target = readQuestionTarget(decision.approval);
  if (target) await tellConversation(deps, { conversationId: decision.approval.conversationId, platform: press.platform, target, text: line });
  await signalDecided(deps, decision.approval);
  return { kind: 'decided', text: line, approval: decision.approval };
}

/**
 * `/approve`, `/approve session`, `/deny` typed in the chat: stored once as
 * `done` (a re-delivery changes nothing and says nothing), never turn input
 * and never an interrupt; decided here for the conversation's pending
 * question; the reply goes through the outbox like any reply, and the worker
 * waiting on the question delivers it at once.
 */
export async function answerApprovalCommand(
  deps: ApprovalDeps,
  message: InboundMessage,
  command: ChatCommand,
  /** Whether an answer that decided nothing may say so (a refusal is quiet under a flood: refusedAnswerMaySpeak). */
  refusalMaySpeak: () => Promise<boolean> = async () => true,
): Promise<'accepted' | 'duplicate'> {
  const stored = await storeInboundEvent(deps.db, inboundToStore(message, command, { refuseAtPending: null, storeAs: 'done' }));
  if (stored.duplicate) return 'duplicate';
  const parsed = parseApprovalCommand(command);
  const choice = parsed?.choice ?? null;
  const decision: ApprovalDecision | undefined =
    parsed === null
      ? undefined
      : await decideApproval(deps.db, {
          target: { conversationId: stored.conversationId },
          choice: parsed.choice,
          byUserKey: userKeyOf(message.platform, message.address.accountId, message.userId),
          via: 'text',
          approvers: deps.approvers,
          ...(parsed.code ? { code: parsed.code } : {}),
        });
  const decided = choice !== null && decision?.kind === 'decided';
  const reply = choice === null ? approvalReplies.unknownArgs : decision?.kind === 'decided' ? renderApprovalDecision(choice, message.userId) : refusalText(decision);
  if (decided || (await refusalMaySpeak())) await tellConversation(deps, { conversationId: stored.conversationId, platform: message.platform, target: message.replyTarget, text: reply });
  if (decision?.kind === 'decided') await signalDecided(deps, decision.approval);
  else await publishApprovalSignal(deps.redis, deps.redisPrefix, { kind: 'notice', conversationId: stored.conversationId, approvalId: 0 }).catch(() => undefined);
  return 'accepted';
}

function refusalText(decision: Exclude<ApprovalDecision, { kind: 'decided' }> | undefined): string {
  switch (decision?.kind) {
    case 'not_allowed':
      return renderNotAllowed(decision.approval.askedOfUserKey);
    case 'already_decided':
      return approvalReplies.alreadyAnswered;
    case 'expired':
      return approvalReplies.expired;
    case 'code_required':
      return approvalReplies.codeRequired;
    default:
      return approvalReplies.nothingPending;
  }
}

/** One line for a conversation: where it goes and what it says. */
type ConversationNotice = Parameters<typeof queueConversationNotice>[1];

/** The line goes out through the outbox: the waiting worker sends it at once; else whoever holds the conversation next (or the sweep). */
async function tellConversation(deps: ApprovalDeps, notice: ConversationNotice): Promise<void> {
  const { conversationId } = notice;
  await queueConversationNotice(deps.db, notice);
  await enqueueWake(deps.queue, { conversationId, inboundEventId: null, reason: 'outbox' }, `approval-${conversationId}-${Date.now()}`).catch((err: unknown) =>
    deps.log.warn({ err, conversationId }, 'approval reply queued, wake-up not enqueued; the sweep delivers it'),
  );
}

async function signalDecided(deps: ApprovalDeps, approval: ApprovalRow): Promise<void> {
  // Lost, the worker still sees the decision when it next reads the question (every few seconds).
  await publishApprovalSignal(deps.redis, deps.redisPrefix, { kind: 'decided', conversationId: approval.conversationId, approvalId: approval.id }).catch((err: unknown) =>
    deps.log.warn({ err, approvalId: approval.id }, 'approval signal not published; the worker reads the decision on its next look'),
  );
}

function readQuestionTarget(approval: ApprovalRow): Record<string, unknown> | undefined {
  const target = approval.questionRef?.target;
  return typeof target === 'object' && target !== null && !Array.isArray(target) ? (target as Record<string, unknown>) : undefined;
}
