import type { WorkerContext } from '../worker-context.ts';
import { commitAndReport } from './commit-and-report.ts';
import { executeStreamed } from './execute-turn.ts';
import { failTurnUnexpectedly } from './fail-turn.ts';
import { prepareTurn } from './prepare-turn.ts';
import { resolveMedia } from './resolve-media.ts';
import { outcomeOfNotBegun, settleStaleTurn } from './settle-stale-turn.ts';
import { startTurnReactions } from './status-reactions.ts';
import { notices } from './turn-notices.ts';
import { turnTimeoutOf } from './turn-runtime.ts';
import type { ExecutedTurn, ExecutingTurn, TakenTurn, Turn, TurnOutcome } from './turn.ts';

/**
 * Runs one turn for its taken input (pending inbound events, oldest first)
 * and commits its result. The caller holds the conversation's lease, and
 * registered the turn before reading the input (turn.ts, `TakenTurn`). The
 * five steps (docs/turns.md): settle a stale running turn → prepare (files,
 * row, compression, history, notes) → execute (the runtime, streamed) →
 * commit (fenced) → report.
 */
export async function runTurn(ctx: WorkerContext, taken: TakenTurn): Promise<TurnOutcome> {
  const { state, holding } = taken;
  // 1. The last turn still running is not ours to continue: a dead worker's, or one that lost the lease.
  if (state.lastTurn?.status === 'running') return settleStaleTurn(ctx, { conversationId: state.conversation.id, holding });
  const turn = startTurn(ctx, taken);
  try {
    return await prepareExecuteCommit(ctx, turn);
  } catch (error) {
    // Preparation and commit have no catch of their own: whatever throws there ends the turn failed, once (fail-turn.ts).
    const failed = await failTurnUnexpectedly(ctx, { state, input: taken.input, holding, error, notice: notices.failed });
    if (failed.kind === 'committed') taken.active.dispatch({ kind: 'committed', outcome: 'failed' });
    return failed;
  }
}

/** The turn, started: its reactions (best-effort, never awaited: 👀 once it has run a while, ✅/❌ once committed) and its log. */
function startTurn(ctx: WorkerContext, taken: TakenTurn): Turn {
  const { conversation } = taken.state;
  return { ...taken, conversation, reactions: startTurnReactions(ctx, conversation.platform, conversation.id), log: ctx.log.child({ conversationId: conversation.id }) };
}

/** Steps 2 to 5, once no stale turn is in the way. */
async function prepareExecuteCommit(ctx: WorkerContext, turn: Turn): Promise<TurnOutcome> {
  // The turn's time budget (issue 17, defect 3) runs from here: files, compression, model requests, retries and tools
  // all count; the commit and the delivery do not. It ends the turn through the same signal as /stop, so every wait the
  // turn is in is cut at once. A Codex turn has its own budget (CODEX_TURN_TIMEOUT_MS).
  const deadline = setTimeout(() => turn.active.dispatch({ kind: 'stop', reason: 'timeout' }), turnTimeoutOf(ctx.config, turn.conversation));
  let executing: ExecutingTurn;
  let executed: ExecutedTurn;
  try {
    const prepared = await prepareWithFiles(ctx, turn);
    if (prepared.kind === 'ended') return prepared.outcome;
    executing = prepared.turn;
    executed = await executeStreamed(ctx, executing);
  } finally {
    clearTimeout(deadline);
    turn.reactions.end();
  }
  const begun = await executing.prepared.begin;
  if (begun.kind !== 'begun') return outcomeOfNotBegun(ctx, { conversationId: turn.conversation.id, holding: turn.holding, begun });
  const outcome = await commitAndReport(ctx, executing, { turnId: begun.turnId, executed });
  if (outcome.kind === 'committed') turn.reactions.settle(executed.status);
  return outcome;
}

/** Step 2: the files read (before the first model call, inside the time budget: docs/media.md), then the request prepared. */
async function prepareWithFiles(ctx: WorkerContext, turn: Turn): Promise<{ kind: 'ready'; turn: ExecutingTurn } | { kind: 'ended'; outcome: TurnOutcome }> {
  const { active, holding } = turn;
  const media = await resolveMedia(ctx, turn.conversation.platform, turn.input, active.controller.signal);
  const prepared = await prepareTurn(ctx, { ...turn, input: media.events });
  if ('kind' in prepared) return { kind: 'ended', outcome: await outcomeOfNotBegun(ctx, { conversationId: turn.conversation.id, holding, begun: prepared.begun }) };
  // A summary keeps going when the lease is lost (docs/compression.md); before its model request the turn asks the lease
  // once more, so a holding that lost it meanwhile sends nothing (SEED=4242: it did, beside the new holder's turn).
  if (prepared.summarised && !(await holding.confirm())) active.dispatch({ kind: 'stop', reason: 'lease_lost' });
  turn.reactions.take(turn.input);
  return { kind: 'ready', turn: { ...turn, media, prepared } };
}
