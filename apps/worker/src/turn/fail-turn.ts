import { crashStreakChangeOf, crashStreakSuspends, splitMessage } from '@switchboard/core';
import { commitTurn, loadTurnState, type InboundEventRow, type OutboxRow, type TurnState } from '@switchboard/db';
import type { LeaseHolding } from '../conversation/conversation-lease.ts';
import { suspendLoops } from '../liveness/restart-guard.ts';
import type { WorkerContext } from '../worker-context.ts';

/** What failTurnUnexpectedly needs: the state the turn started from, its input, the holding, and the error. */
export interface UnexpectedTurnError {
  state: TurnState;
  input: InboundEventRow[];
  holding: LeaseHolding;
  error: unknown;
  /** The line the user gets (run-turn's notices.failed). */
  notice: string;
}

/**
 * Ends a turn that threw while it was prepared or committed (issue 29,
 * defect 4): before, the error left the turn `running`, the next holder
 * marked it superseded, uncounted, and the conversation re-ran every few
 * seconds for ever (a summary with U+0000 made every compression commit
 * throw). Now the turn ends `failed` with error UNEXPECTED in a minimal
 * fenced commit: its input is taken (no transcript rows: whatever made the
 * full commit throw is not written again), the user gets one notice, and the
 * runtime crash streak grows, so a conversation that keeps failing so is
 * suspended at RESTART_SUSPEND_THRESHOLD like a crash loop. The turn's row,
 * if it was written, is this worker's: the lease kept anyone else from
 * beginning one. If even this commit fails (Postgres is down), the original
 * error is thrown as before and the sweep comes back later.
 */
export async function failTurnUnexpectedly(ctx: WorkerContext, failure: UnexpectedTurnError): Promise<{ kind: 'committed'; outbox: OutboxRow[] } | { kind: 'lost' }> {
  const { state, input, holding, error } = failure;
  const conversationId = state.conversation.id;
  const log = ctx.log.child({ conversationId });
  log.error({ err: error }, 'turn failed with an unexpected error while it was prepared or committed; it ends failed with one notice');
  ctx.metrics.countUnexpectedError('turn');
  try {
    if (!(await holding.confirm())) return { kind: 'lost' };
    const fresh = await loadTurnState(ctx.db, conversationId, 1);
    const session = fresh?.session;
    if (!fresh || !session) throw error;
    const mine = fresh.lastTurn?.status === 'running' && fresh.lastTurn.id !== state.lastTurn?.id ? fresh.lastTurn : undefined;
    const sender = ctx.senders.get(state.conversation.platform);
    const last = input[input.length - 1] as InboundEventRow;
    const committed = await commitTurn(ctx.db, {
      ...(mine ? { turnId: mine.id } : {}),
      conversationId,
      sessionId: session.id,
      status: 'failed',
      error: 'UNEXPECTED',
      inboundEventIds: input.map((event) => event.id),
      messages: [],
      replies: sender ? [{ platform: state.conversation.platform, target: last.replyTarget, chunks: splitMessage(failure.notice, sender.messageLimit) }] : [],
      claimFor: holding.claimId,
      crashStreak: crashStreakChangeOf({ status: 'failed', error: 'UNEXPECTED' }),
    });
    if (committed.kind === 'stale') return { kind: 'lost' };
    if (committed.crashStreak !== null && crashStreakSuspends(committed.crashStreak, ctx.config.RESTART_SUSPEND_THRESHOLD)) {
      await suspendLoops(ctx).catch((err: unknown) => log.warn({ err }, 'crash-loop suspension not applied now; the sweep will'));
    }
    return { kind: 'committed', outbox: committed.outbox };
  } catch (caught) {
    if (caught !== error) log.warn({ err: caught }, 'the failed turn could not be committed either; left for the sweep');
    throw error;
  }
}
