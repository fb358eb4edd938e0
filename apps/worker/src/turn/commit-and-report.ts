import { crashStreakSuspends } from '@switchboard/core';
import { abandonTurn, commitTurn, type CommitTurnInput, type CommitTurnResult } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { suspendLoops } from '../liveness/restart-guard.ts';
import type { WorkerContext } from '../worker-context.ts';
import { settlementOf } from './active-turn.ts';
import { buildCommit } from './build-commit.ts';
import { turnTimeoutOf } from './turn-runtime.ts';
import type { ExecutedTurn, ExecutingTurn, TurnOutcome } from './turn.ts';

type CommitDeps = Pick<WorkerContext, 'db' | 'config' | 'metrics' | 'senders' | 'history' | 'emit' | 'actions' | 'log'>;

/** What the turn came to: its running-turn row and what the runtime produced. */
export interface TurnResult {
  turnId: number;
  executed: ExecutedTurn;
}

/** The fenced commit, then metrics and lifecycle events; a turn cut off or whose lease was lost commits nothing. */
export async function commitAndReport(deps: CommitDeps, turn: ExecutingTurn, result: TurnResult): Promise<TurnOutcome> {
  const { turnId, executed } = result;
  const { conversation, session } = turn.prepared;
  const log = turn.log.child({ sessionId: session.id, turnId });
  const settlement = settlementOf(turn.active.state);
  if (settlement === 'leave_running') {
    log.info('turn cut off by shutdown; left for resume');
    return { kind: 'cut_off' };
  }
  if (settlement === 'abandon') {
    // No restart happened: the turn ends here, uncounted, and its input stays pending for the new holder.
    await abandonTurn(deps.db, turnId, 'lease_lost');
    deps.metrics.countSupersededTurn('lease_lost');
    log.warn('lease lost mid-turn; nothing committed');
    return { kind: 'lost' };
  }
  if (executed.error === 'TURN_TIMEOUT') {
    deps.metrics.countTurnLimit('timeout');
    log.warn({ timeoutMs: turnTimeoutOf(deps.config, conversation) }, 'turn stopped: it ran past its time limit (TURN_TIMEOUT_MS, or CODEX_TURN_TIMEOUT_MS for codex)');
  }
  const commit = buildTurnCommit(deps, turn, result);
  const committed = await commitTurn(deps.db, commit);
  if (committed.kind === 'stale') {
    // Another holder settled this turn or took its input: its reply is never sent (issue 16, defect 2). Refused
    // with its row still running (its input taken, its session rotated), the row ends here as superseded: left
    // running, no later turn of the conversation could begin (found on a Redis Cluster, TURN_REDIS=cluster).
    await abandonTurn(deps.db, turnId, 'lease_lost');
    deps.metrics.countSupersededTurn('commit_refused');
    log.warn('commit refused: the turn was superseded; nothing sent');
    return { kind: 'lost' };
  }
  await reportCommitted(deps, { turn, result, committed, log });
  log.debug({ status: executed.status, parts: commit.replies[0]?.chunks.length ?? 0 }, 'turn committed');
  return { kind: 'committed', outbox: committed.outbox };
}

/** The commit's rows, shaped for the conversation's platform (its message limit, COMPRESSION_NOTICE). */
function buildTurnCommit(deps: Pick<CommitDeps, 'senders' | 'config'>, turn: ExecutingTurn, result: TurnResult): CommitTurnInput {
  const { prepared, media, active, holding } = turn;
  const sender = deps.senders.get(prepared.conversation.platform);
  const fits = sender?.fitsOneMessage?.bind(sender);
  const shape = { messageLimit: sender?.messageLimit, ...(fits ? { fits } : {}), compressionNotice: deps.config.COMPRESSION_NOTICE === 'on' };
  return buildCommit({ prepared, turnId: result.turnId, executed: result.executed, input: media.events, active, claimId: holding.claimId, media }, shape);
}

/** A committed turn, and the log of its report. */
interface CommittedTurn {
  turn: ExecutingTurn;
  result: TurnResult;
  committed: Extract<CommitTurnResult, { kind: 'committed' }>;
  log: Logger;
}

/** After the commit: the turn's state, the history cache, metrics, lifecycle events, and a crash loop suspended now. */
async function reportCommitted(deps: CommitDeps, done: CommittedTurn): Promise<void> {
  const { turn, result, committed, log } = done;
  const { executed, turnId } = result;
  const { conversation, session, startedAt } = turn.prepared;
  const { status } = executed;
  turn.active.dispatch({ kind: 'committed', outcome: status });
  deps.history.append(session.id, committed.messages);
  deps.metrics.observeTurn(status, (performance.now() - startedAt) / 1000);
  if (status === 'completed' && executed.model) deps.metrics.countModelAnswer(executed.model);
  const event = { conversationId: conversation.id, sessionId: session.id, turnId };
  if (status === 'interrupted' || status === 'cancelled') await deps.emit({ type: 'turn.interrupted', ...event, reason: turn.active.state.stopReason });
  await deps.emit({ type: 'turn.ended', ...event, outcome: status });
  if (executed.error === 'RUNTIME_CRASHED') log.warn({ crashStreak: committed.crashStreak }, 'the runtime child died mid-turn; the next turn gets a fresh one');
  // Runtime crashes in a row suspend like a restart loop (docs/codex.md): the same rule and announcement, applied now.
  // If this fails, the sweep's restart rules apply the same rule within SWEEP_INTERVAL_MS (and beginTurn refuses a turn meanwhile).
  if (committed.crashStreak !== null && crashStreakSuspends(committed.crashStreak, deps.config.RESTART_SUSPEND_THRESHOLD)) {
    await suspendLoops(deps).catch((err: unknown) => log.warn({ err }, 'crash-loop suspension not applied now; the sweep will'));
  }
}
