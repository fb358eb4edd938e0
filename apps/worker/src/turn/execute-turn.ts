import type { RunTurnRequest, RunTurnResult, TranscriptEntry, TurnFailure } from '@switchboard/agent';
import { approvalAskedOf, resolveStreaming, userKeyOf } from '@switchboard/core';
import { acknowledgeRecoveryNote, acknowledgeResumeNote, loadPendingInbound, type InboundEventRow } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { steerableInput } from '../conversation/plan-work.ts';
import type { WorkerContext } from '../worker-context.ts';
import { stoppedTurnStatus, type ActiveTurnState } from './active-turn.ts';
import { startReplyStream, streamingSender, type ReplyStream, type StreamDeps } from './reply-stream.ts';
import { noticeForFailure, notices } from './turn-notices.ts';
import { createTurnAskUser, logRefusedRuntime } from './turn-runtime.ts';
import type { ExecutedTurn, ExecutingTurn } from './turn.ts';
import { startTypingIndicator } from './typing-indicator.ts';

type ExecuteDeps = StreamDeps & Pick<WorkerContext, 'runtimes' | 'workerId' | 'approvalWaiters'>;

/** The runtime's run, its answer shown as it grows when the conversation streams; the stream is finished before the commit. */
export async function executeStreamed(deps: ExecuteDeps, turn: ExecutingTurn): Promise<ExecutedTurn> {
  const { conversation, begin } = turn.prepared;
  const sender = streamingSender(deps, conversation.platform, resolveStreaming(conversation.streaming, deps.config.STREAMING));
  const last = turn.media.events.at(-1) as InboundEventRow;
  const stream = sender ? startReplyStream(deps, { conversationId: conversation.id, sender, target: last.replyTarget, begin, claimId: turn.holding.claimId }) : undefined;
  const executed = await executeTurn(deps, turn, stream);
  const streamed = await stream?.finish();
  return streamed?.open ? { ...executed, stream: streamed } : executed;
}

/** The runtime's run. An error nobody expected fails this turn (logged, counted, one notice) and never the process. */
async function executeTurn(deps: ExecuteDeps, turn: ExecutingTurn, stream: ReplyStream | undefined): Promise<ExecutedTurn> {
  const { prepared, media, active } = turn;
  const forModel = media.events.filter((event) => !media.dropped.has(event.id));
  const log = turn.log.child({ sessionId: prepared.session.id });
  const sender = deps.senders.get(prepared.conversation.platform);
  const typing = sender ? startTypingIndicator(sender, (media.events.at(-1) as InboundEventRow).replyTarget, deps.log) : undefined;
  const stopped = (): ExecutedTurn => stoppedExecution(active.state);
  try {
    // Interrupted during compression: the summary is committed, the turn ends without a model call.
    if (active.controller.signal.aborted) return stopped();
    // Every file of the input was refused or failed: its short replies are the answer, the model is not asked.
    if (forModel.length === 0) return { entries: [], status: 'completed', replyText: null };
    const choice = await deps.runtimes.runtimeFor(prepared.conversation);
    if (choice.kind !== 'ready') return { entries: [], status: 'failed', error: logRefusedRuntime(choice, log), replyText: notices.failed };
    // The first request goes out alongside the running-turn row only while this worker's last beat is fresh. After a
    // stall (SIGSTOP, a long pause) it waits for the row: a worker declared dead meanwhile is refused it, and sends
    // nothing (SEED=909: a woken worker's request ran beside the holder's before its refused row stopped it).
    if (!deps.heartbeat.mayAct() && (await prepared.begin).kind !== 'begun') return stopped();
    const result = await choice.runtime.runTurn(buildRunRequest(deps, { turn, forModel, stream }));
    return executedOf(result, { state: active.state, log });
  } catch (caught) {
    if (active.state.stopReason === 'timeout') return stopped();
    log.error({ err: caught }, 'turn failed with an unexpected error');
    deps.metrics.countUnexpectedError('turn');
    return { entries: [], status: 'failed', error: 'UNEXPECTED', replyText: notices.failed };
  } finally {
    typing?.stop();
  }
}

/** The request to the runtime: the prepared history and notes, the input the model reads, and the turn's hooks. */
function buildRunRequest(deps: ExecuteDeps, run: { turn: ExecutingTurn; forModel: InboundEventRow[]; stream: ReplyStream | undefined }): RunTurnRequest {
  const { turn, forModel, stream } = run;
  const { prepared, media, active } = turn;
  const { conversation, session } = prepared;
  // The turn's user (turns.user_key): who is asked to approve what the runtime wants to do.
  const first = media.events[0] as InboundEventRow;
  const userKey = userKeyOf(first.platform, first.accountId, first.userId);
  const threadId = session.runtimeThreadId;
  // What the thread never received (a turn stopped before Codex had its input): carried with this turn (docs/codex.md, "Threads").
  const unseen = threadId ? prepared.sentHistory.filter((message) => message.seq > session.runtimeSyncedSeq) : [];
  return {
    instructions: deps.config.SYSTEM_PROMPT,
    history: prepared.sentHistory,
    notes: prepared.notes,
    input: forModel.map((e) => e.text),
    inputImages: forModel.map((e) => media.images.get(e.id) ?? []),
    signal: active.controller.signal,
    ...(stream ? { onText: stream.onText } : {}),
    onModelAccepted: () => acknowledgeNotes(deps, turn),
    takeSteerInput: active.state.mode === 'steer' ? () => takeSteerInput(deps, turn) : undefined,
    mayHandOver: () => deps.heartbeat.waitToAct(active.controller.signal),
    askUser: createTurnAskUser(deps, {
      conversationId: conversation.id,
      platform: conversation.platform,
      replyTarget: (media.events.at(-1) as InboundEventRow).replyTarget,
      // A triggered turn's (POST /hooks/{name}) questions are named for nobody: only APPROVERS may answer (docs/tools.md).
      askedOfUserKey: approvalAskedOf(userKey, first.userId),
      begin: prepared.begin,
    }),
    ...(threadId ? { runtimeIds: { threadId } } : {}),
    ...(unseen.length > 0 ? { runtimeUnseen: unseen } : {}),
    userKey,
    // The `schedule` tool acts for this conversation and user; the first input names the turn across a re-run.
    caller: { conversationId: conversation.id, userKey, userId: first.userId, turnKey: `${conversation.id}:${first.id}` },
  };
}

/** The model accepted the request: the notes it carried count as delivered, for a turn that really began (its row was written). */
async function acknowledgeNotes(deps: Pick<ExecuteDeps, 'db' | 'metrics'>, turn: ExecutingTurn): Promise<void> {
  const { begin, session, recoveryKey, resumes } = turn.prepared;
  const begun = await begin;
  if (begun.kind !== 'begun') return;
  if (recoveryKey) {
    deps.metrics.countRecoveryNote('recovery');
    await acknowledgeRecoveryNote(deps.db, { sessionId: session.id, tailKey: recoveryKey, turnId: begun.turnId });
  }
  if (resumes) {
    deps.metrics.countRecoveryNote('resume');
    await acknowledgeResumeNote(deps.db, { sessionId: session.id, turnId: begun.turnId });
  }
}

/** What the runtime's result means for the turn: its entries, status and reply, and what the commit keeps of the runtime. */
function executedOf(result: RunTurnResult, at: { state: ActiveTurnState; log: Logger }): ExecutedTurn {
  const kept = {
    ...(result.runtimeIds?.threadId ? { runtimeThreadId: result.runtimeIds.threadId } : {}),
    ...(result.runtimeReceivedInput ? { runtimeSynced: true } : {}),
    ...(result.model ? { model: result.model } : {}),
  };
  if (result.outcome === 'interrupted') return { ...stoppedExecution(at.state), entries: result.entries, ...kept };
  if (result.outcome === 'failed') {
    const failed = at.state.stopReason === 'timeout' ? { ...stoppedExecution(at.state), entries: result.entries } : failedTurn(result.failure, result.entries, at.log);
    return { ...failed, ...kept };
  }
  return { entries: result.entries, status: 'completed', replyText: result.text.trim() === '' ? notices.empty : result.text, ...kept };
}

/**
 * A turn the runtime left early (or never started): out of time, it ends like
 * a model that kept failing (one notice, `failed`, the input consumed), never
 * a restart; cancelled or interrupted, it says nothing.
 */
export function stoppedExecution(state: ActiveTurnState): ExecutedTurn {
  const status = stoppedTurnStatus(state);
  if (status === 'timed_out') return { entries: [], status: 'failed', error: 'TURN_TIMEOUT', replyText: notices.timedOut };
  return { entries: [], status, replyText: null };
}

/** The model could not answer: one notice, chosen by the failure's code. */
function failedTurn(failure: TurnFailure, entries: TranscriptEntry[], log: Logger): ExecutedTurn {
  log.warn({ code: failure.code, err: failure.cause }, 'turn failed');
  return { entries, status: 'failed', error: failure.code, replyText: noticeForFailure(failure.code) };
}

/** Busy mode `steer`: input that arrived since the turn started joins it at the next model call. */
async function takeSteerInput(deps: Pick<ExecuteDeps, 'db' | 'config'>, turn: ExecutingTurn): Promise<{ text: string; inboundEventId: number }[]> {
  const { active, reactions } = turn;
  const pending = await loadPendingInbound(deps.db, active.conversationId, deps.config.MAX_QUEUED_INPUT);
  const steered = steerableInput(pending, active.state.takenUpTo ?? 0);
  reactions.take(steered);
  const taken = steered.map((event) => ({ text: event.text, inboundEventId: event.id }));
  const lastTaken = taken.at(-1);
  if (lastTaken) active.dispatch({ kind: 'taken', upTo: lastTaken.inboundEventId });
  return taken;
}
