import { describeApprovalOutcome, renderAnsweredQuestion } from '@switchboard/core';
import { claimUntidiedQuestions, releaseQuestionTidy, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { PlatformSender } from '@switchboard/platforms';

export interface TidyContext {
  db: Database;
  senders: Map<string, PlatformSender>;
  log: Logger;
}

/** A sweep edits at most this many questions: a backlog is worked off over a few passes, never in one burst at the platform. */
const batch = 20;

/**
 * Edits settled questions whose asking turn died before it could (docs/codex.md,
 * "Approvals in chat"): their buttons go and the outcome line is added, as the
 * asking turn would have done. Run by every worker's recovery sweep; the claim
 * is one statement, so each question is edited by one worker. Never throws:
 * a failed edit is owed again, a failed claim waits for the next sweep.
 */
export async function tidySettledQuestions(ctx: TidyContext): Promise<number> {
  let tidied = 0;
  try {
    for (const question of await claimUntidiedQuestions(ctx.db, batch)) {
      const sender = ctx.senders.get(question.platform);
      try {
        if (!sender?.replaceText) continue;
        await sender.replaceText(question.target, question.platformMessageId, renderAnsweredQuestion(question, describeApprovalOutcome(question.status)));
        tidied++;
      } catch (err) {
        ctx.log.warn({ err, approvalId: question.id, conversationId: question.conversationId }, 'settled question not tidied; the next sweep tries again');
        await releaseQuestionTidy(ctx.db, question.id);
      }
    }
  } catch (err) {
    ctx.log.warn({ err }, 'settled questions not read; the next sweep tries again');
  }
  if (tidied > 0) ctx.log.info({ tidied }, 'settled questions of turns that ended elsewhere tidied');
  return tidied;
}
