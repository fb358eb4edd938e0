import { estimateMessageTokens, type TranscriptEntry, type TurnFailure } from '@switchboard/agent';
import { crashStreakChangeOf, crashStreakSuspends, normaliseText, resolveStreaming, splitMessage, staleTurnRule, stoppedStreamText, userKeyOf } from '@switchboard/core';
import {
  abandonTurn,
  acknowledgeRecoveryNote,
  acknowledgeResumeNote,
  commitTurn,
  loadPendingInbound,
  settleRunningTurn,
  type CommitTurnInput,
  type InboundEventRow,
  type NewTranscriptMessage,
  type OutboxRow,
  type TurnState,
} from '@switchboard/db';
import { cancellingStopOf, settlementOf, stoppedTurnStatus, type ActiveTurn, type ActiveTurnState } from './active-turn.ts';
import type { LeaseHolding } from '../conversation/conversation-lease.ts';
import { steerableInput } from '../conversation/plan-work.ts';
import { prepareTurn, type NotBegun, type PreparedTurn } from './prepare-turn.ts';
import { resolveMedia, type ResolvedInput } from './resolve-media.ts';
import { startReplyStream, streamingSender, type ReplyStream, type StreamResult } from './reply-stream.ts';
import { failTurnUnexpectedly } from './fail-turn.ts';
import { suspendLoops } from '../liveness/restart-guard.ts';
import { startTurnReactions, type TurnReactions } from './status-reactions.ts';
import { createTurnAskUser, logRefusedRuntime, turnTimeoutOf } from './turn-runtime.ts';
import { startTypingIndicator } from './typing-indicator.ts';
import type { WorkerContext } from '../worker-context.ts';

/** Lines the user sees when a turn produced no answer (a turn never ends silently). */
export const notices = {
  failed: 'Sorry, something went wrong and I could not answer that. Please try again.',
  rateLimited: 'I am getting too many requests right now. Please try again in a minute.',
  refused: 'I cannot help with that request.',
  empty: 'I have no answer to that.',
  /** The turn ran TURN_TIMEOUT_MS and was stopped (issue 17, defect 3). */
  timedOut: 'That took too long and was stopped. Please try again, perhaps with a smaller request.',
  suspendedRestartLoop:
    'Your previous session was paused after it was cut off by repeated restarts, so this is a fresh start. An operator can restore the earlier session.',
  /** The runtime's child process (codex app-server) died mid-turn (RUNTIME_CRASHED); the next message gets a fresh one (docs/codex.md). */
  runtimeCrashed: 'The agent process stopped unexpectedly. Please send your message again.',
  suspendedRuntimeCrashLoop:
    'Your previous session was paused after the agent process stopped unexpectedly several times in a row, so this is a fresh start. An operator can restore the earlier session.',
} as const;

/** How a turn ended, for the caller that drains the conversation. */
export type TurnOutcome =
  /** Committed: these outbox rows wait to be delivered. */
  | { kind: 'committed'; outbox: OutboxRow[] }
  /** Stopped by shutdown: left running, so the restart is counted and the next holder resumes it (docs/restarts.md). */
  | { kind: 'cut_off' }
  /** This worker lost the conversation (lease lost, or the fenced commit refused): it sends nothing more for it. */
  | { kind: 'lost' }
  /** A stale running turn was settled or the restart threshold reached: apply the restart rules and read again. */
  | { kind: 'recheck' }
  /** Its input's user already runs USER_MAX_RUNNING_TURNS turns: nothing was written, the input stays pending for later. */
  | { kind: 'deferred' };

/** What the runtime produced, or the notice that stands for it. */
export interface ExecutedTurn {
  entries: TranscriptEntry[];
  status: 'completed' | 'interrupted' | 'failed' | 'cancelled';
  replyText: string | null;
  error?: string;
  /** The runtime's thread (Codex), kept on the session by the commit for the next turn. */
  runtimeThreadId?: string;
  /** The thread received this turn's input: the commit advances `sessions.runtime_synced_seq`. */
  runtimeSynced?: boolean;
  /** The model that answered (or last failed): `turns.model` (docs/turns.md "Model fallbacks"). */
  model?: string;
  /** The growing message this turn streamed into (STREAMING), if it posted or took one over. */
  stream?: StreamResult;
}

/**
 * Runs one turn for `input` (pending inbound events, oldest first) and commits
 * its result. The caller holds the conversation's lease (`holding`: whether it
 * is still ours, and the claim its reply parts are committed under),
 * registered `active` before reading `input`, and passes the state it read
 * `input` with. The steps: settle a
 * stale running turn → prepare (row, compression, history, notes) → execute
 * (the runtime) → commit (fenced) → report.
 */
export async function runTurn(ctx: WorkerContext, state: TurnState, input: InboundEventRow[], active: ActiveTurn, holding: LeaseHolding): Promise<TurnOutcome> {
  // The last turn still running is not ours to continue: a dead worker's, or one that lost the lease.
  if (state.lastTurn?.status === 'running') return settleStaleTurn(ctx, state.conversation.id, holding);
  try {
    return await prepareExecuteCommit(ctx, state, input, active, holding);
  } catch (error) {
    // Preparation and commit have no catch of their own: whatever throws there ends the turn failed, once (fail-turn.ts).
    const failed = await failTurnUnexpectedly(ctx, { state, input, holding, error, notice: notices.failed });
    if (failed.kind === 'committed') active.dispatch({ kind: 'committed', outcome: 'failed' });
    return failed;
  }
}

/** runTurn's steps once no stale turn is in the way. */
async function prepareExecuteCommit(ctx: WorkerContext, state: TurnState, input: InboundEventRow[], active: ActiveTurn, holding: LeaseHolding): Promise<TurnOutcome> {
  // The turn's time budget (issue 17, defect 3) runs from here: compression, model requests,
  // retries and tools all count; the commit and the delivery do not. It ends the turn through
  // the same signal as /stop, so every wait the turn is in is cut at once.
  // A Codex turn has its own budget (CODEX_TURN_TIMEOUT_MS): an agent that runs commands takes longer than a chat answer.
  const deadline = setTimeout(() => active.dispatch({ kind: 'stop', reason: 'timeout' }), turnTimeoutOf(ctx.config, state.conversation));
  let prepared: Awaited<ReturnType<typeof prepareTurn>>;
  let executed: ExecutedTurn;
  // Best-effort and never awaited here (STATUS_REACTIONS): 👀 once the turn has run a while on its input, ✅/❌ once it committed.
  const reactions = startTurnReactions(ctx, state.conversation.platform, state.conversation.id);
  let media: ResolvedInput;
  try {
    // Files are read before the turn's first model call, inside its time budget (docs/media.md).
    media = await resolveMedia(ctx, state.conversation.platform, input, active.controller.signal);
    prepared = await prepareTurn(ctx, state, media.events, active);
    if ('kind' in prepared) return await handleNotBegun(ctx, state.conversation.id, prepared.begun, holding);
    // A summary keeps going when the lease is lost (docs/compression.md); before its model request the turn asks the lease
    // once more, so a holding that lost it meanwhile sends nothing (SEED=4242: it did, beside the new holder's turn).
    if (prepared.summarised && !(await holding.confirm())) active.dispatch({ kind: 'stop', reason: 'lease_lost' });
    reactions.take(input);
    executed = await executeStreamed(ctx, prepared, media, active, reactions, holding.claimId);
  } finally {
    clearTimeout(deadline);
    reactions.end();
  }
  const begun = await prepared.begin;
  if (begun.kind !== 'begun') return handleNotBegun(ctx, state.conversation.id, begun, holding);
  const outcome = await commitAndReport(ctx, { prepared, turnId: begun.turnId, executed, input: media.events, active, claimId: holding.claimId, media });
  if (outcome.kind === 'committed') reactions.settle(executed.status);
  return outcome;
}

async function handleNotBegun(ctx: WorkerContext, conversationId: number, begun: NotBegun, holding: LeaseHolding): Promise<TurnOutcome> {
  const next = afterNotBegun(begun);
  if (next === 'settle') return settleStaleTurn(ctx, conversationId, holding);
  if (next === 'recheck') ctx.log.warn({ conversationId }, 'turn not started: the conversation reached the restart threshold');
  return { kind: next };
}

/** What a turn whose running-turn row was refused does next. */
export function afterNotBegun(begun: NotBegun): 'settle' | 'deferred' | 'recheck' | 'lost' {
  // Declared dead by a peer: its holdings belong to others now; the heartbeat ends the process.
  if (begun.kind === 'declared_dead') return 'lost';
  // Another running turn appeared after the state read (a worker that lost the lease wrote its row late): settle it first.
  if (begun.kind === 'occupied') return 'settle';
  // Another worker began a turn of the same user since the state read: the limit holds in the database itself.
  if (begun.kind === 'user_busy') return 'deferred';
  // The restart threshold: the restart rules suspend the conversation before it is read again.
  return 'recheck';
}

/**
 * Ends a running turn this worker found on a conversation whose lease it
 * holds: cut off and counted if its worker is dead, superseded (no restart)
 * if its worker is alive but lost the lease. Done only after confirming the
 * lease is still ours, so a worker that itself lost the lease never ends the
 * new holder's turn.
 */
async function settleStaleTurn(ctx: WorkerContext, conversationId: number, holding: LeaseHolding): Promise<TurnOutcome> {
  if (!(await holding.confirm())) return { kind: 'lost' };
  // Core's stale-turn rule decides, inside the statement: a live worker's turn is superseded, any other is cut off and counted.
  const settled = await settleRunningTurn(ctx.db, conversationId, staleTurnRule(ctx.config.WORKER_DEAD_AFTER_MS));
  ctx.metrics.countRestartIncrements(settled.cutOff);
  ctx.log.warn({ conversationId, ...settled }, 'a running turn of another worker was settled before this turn');
  return { kind: 'recheck' };
}

/** The runtime's run, its answer shown as it grows when the conversation streams; the stream is finished before the commit. */
async function executeStreamed(ctx: WorkerContext, prepared: PreparedTurn, media: ResolvedInput, active: ActiveTurn, reactions: TurnReactions, claimId: string): Promise<ExecutedTurn> {
  const { conversation } = prepared;
  const sender = streamingSender(ctx, conversation.platform, resolveStreaming(conversation.streaming, ctx.config.STREAMING));
  const last = media.events[media.events.length - 1] as InboundEventRow;
  const stream = sender ? startReplyStream(ctx, { conversationId: conversation.id, sender, target: last.replyTarget, begin: prepared.begin, claimId }) : undefined;
  const executed = await executeTurn(ctx, prepared, media, active, reactions, stream);
  const streamed = await stream?.finish();
  return streamed?.open ? { ...executed, stream: streamed } : executed;
}

/** The runtime's run. An error nobody expected fails this turn (logged, counted, one notice) and never the process. */
async function executeTurn(ctx: WorkerContext, prepared: PreparedTurn, media: ResolvedInput, active: ActiveTurn, reactions: TurnReactions, stream: ReplyStream | undefined): Promise<ExecutedTurn> {
  const { conversation, session, notes, recoveryKey, resumes } = prepared;
  const input = media.events;
  const forModel = input.filter((event) => !media.dropped.has(event.id));
  const log = ctx.log.child({ conversationId: conversation.id, sessionId: session.id });
  const last = input[input.length - 1] as InboundEventRow;
  // The turn's user (turns.user_key): who is asked to approve what the runtime wants to do.
  const first = input[0] as InboundEventRow;
  const sender = ctx.senders.get(conversation.platform);
  const typing = sender ? startTypingIndicator(sender, last.replyTarget, ctx.log) : undefined;
  const stopped = (): ExecutedTurn => stoppedExecution(active.state);
  try {
    // Interrupted during compression: the summary is committed, the turn ends without a model call.
    if (active.controller.signal.aborted) return stopped();
    // Every file of the input was refused or failed: its short replies are the answer, the model is not asked.
    if (forModel.length === 0) return { entries: [], status: 'completed', replyText: null };
    const choice = await ctx.runtimes.runtimeFor(conversation);
    if (choice.kind !== 'ready') return { entries: [], status: 'failed', error: logRefusedRuntime(choice, log), replyText: notices.failed };
    // The first request goes out alongside the running-turn row only while this worker's last beat is fresh. After a
    // stall (SIGSTOP, a long pause) it waits for the row: a worker declared dead meanwhile is refused it, and sends
    // nothing (SEED=909: a woken worker's request ran beside the holder's before its refused row stopped it).
    if (!ctx.heartbeat.mayAct() && (await prepared.begin).kind !== 'begun') return stopped();
    const threadId = session.runtimeThreadId;
    // What the thread never received (a turn stopped before Codex had its input): carried with this turn (docs/codex.md, "Threads").
    const unseen = threadId ? prepared.sentHistory.filter((message) => message.seq > session.runtimeSyncedSeq) : [];
    const result = await choice.runtime.runTurn({
      instructions: ctx.config.SYSTEM_PROMPT,
      history: prepared.sentHistory,
      notes,
      input: forModel.map((e) => e.text),
      inputImages: forModel.map((e) => media.images.get(e.id) ?? []),
      signal: active.controller.signal,
      ...(stream ? { onText: stream.onText } : {}),
      onModelAccepted: async () => {
        // The notes count as delivered only for a turn that really began (its row was written).
        const begun = await prepared.begin;
        if (begun.kind !== 'begun') return;
        if (recoveryKey) {
          ctx.metrics.countRecoveryNote('recovery');
          await acknowledgeRecoveryNote(ctx.db, { sessionId: session.id, tailKey: recoveryKey, turnId: begun.turnId });
        }
        if (resumes) {
          ctx.metrics.countRecoveryNote('resume');
          await acknowledgeResumeNote(ctx.db, { sessionId: session.id, turnId: begun.turnId });
        }
      },
      takeSteerInput: active.state.mode === 'steer' ? () => takeSteerInput(ctx, active, reactions) : undefined,
      mayHandOver: () => ctx.heartbeat.waitToAct(active.controller.signal),
      askUser: createTurnAskUser(ctx, {
        conversationId: conversation.id,
        platform: conversation.platform,
        replyTarget: last.replyTarget,
        askedOfUserKey: userKeyOf(first.platform, first.accountId, first.userId),
        begin: prepared.begin,
      }),
      ...(threadId ? { runtimeIds: { threadId } } : {}),
      ...(unseen.length > 0 ? { runtimeUnseen: unseen } : {}),
      userKey: userKeyOf(first.platform, first.accountId, first.userId),
    });
    const kept = {
      ...(result.runtimeIds?.threadId ? { runtimeThreadId: result.runtimeIds.threadId } : {}),
      ...(result.runtimeReceivedInput ? { runtimeSynced: true } : {}),
      ...(result.model ? { model: result.model } : {}),
    };
    if (result.outcome === 'interrupted') return { ...stopped(), entries: result.entries, ...kept };
    if (result.outcome === 'failed') return { ...(active.state.stopReason === 'timeout' ? { ...stopped(), entries: result.entries } : failedTurn(result.failure, result.entries, log)), ...kept };
    return { entries: result.entries, status: 'completed', replyText: result.text.trim() === '' ? notices.empty : result.text, ...kept };
  } catch (caught) {
    if (active.state.stopReason === 'timeout') return stopped();
    log.error({ err: caught }, 'turn failed with an unexpected error');
    ctx.metrics.countUnexpectedError('turn');
    return { entries: [], status: 'failed', error: 'UNEXPECTED', replyText: notices.failed };
  } finally {
    typing?.stop();
  }
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
function failedTurn(failure: TurnFailure, entries: TranscriptEntry[], log: WorkerContext['log']): ExecutedTurn {
  log.warn({ code: failure.code, err: failure.cause }, 'turn failed');
  return { entries, status: 'failed', error: failure.code, replyText: noticeForFailure(failure.code) };
}

export function noticeForFailure(code: TurnFailure['code']): string {
  if (code === 'MODEL_RATE_LIMITED') return notices.rateLimited;
  if (code === 'RUNTIME_CRASHED') return notices.runtimeCrashed;
  return code === 'MODEL_REFUSED' ? notices.refused : notices.failed;
}

/** What a committed turn needs besides its result: the turn, its input and the claim its reply parts are committed under. */
interface CommitRequest {
  prepared: PreparedTurn;
  turnId: number;
  executed: ExecutedTurn;
  input: InboundEventRow[];
  active: ActiveTurn;
  claimId: string;
  /** What the input's files became: events kept out of the transcript, and their short replies (docs/media.md). */
  media?: Pick<ResolvedInput, 'dropped' | 'notices'>;
}

/** What buildCommit reads of a CommitRequest. */
export type CommitInputs = Omit<CommitRequest, 'prepared' | 'active'> & {
  prepared: Pick<PreparedTurn, 'conversation' | 'session' | 'compressed' | 'suspendedNotice'> & Partial<Pick<PreparedTurn, 'inputTokenCounts'>>;
  active: Pick<ActiveTurn, 'state'>;
};

/** How replies are shaped: the platform's message limit (undefined: no sender, nothing to send) and COMPRESSION_NOTICE. */
export interface ReplyShape {
  messageLimit: number | undefined;
  /** The sender's check that a rendered part fits (PlatformSender.fitsOneMessage). */
  fits?: (part: string) => boolean;
  compressionNotice: boolean;
}

/** The fenced commit, then metrics and lifecycle events; a turn cut off or whose lease was lost commits nothing. */
async function commitAndReport(ctx: WorkerContext, request: CommitRequest): Promise<TurnOutcome> {
  const { prepared, turnId, executed, active } = request;
  const { conversation, session } = prepared;
  const log = ctx.log.child({ conversationId: conversation.id, sessionId: session.id, turnId });
  const settlement = settlementOf(active.state);
  if (settlement === 'leave_running') {
    log.info('turn cut off by shutdown; left for resume');
    return { kind: 'cut_off' };
  }
  if (settlement === 'abandon') {
    // No restart happened: the turn ends here, uncounted, and its input stays pending for the new holder.
    await abandonTurn(ctx.db, turnId, 'lease_lost');
    ctx.metrics.countSupersededTurn('lease_lost');
    log.warn('lease lost mid-turn; nothing committed');
    return { kind: 'lost' };
  }
  if (executed.error === 'TURN_TIMEOUT') {
    ctx.metrics.countTurnLimit('timeout');
    log.warn({ timeoutMs: turnTimeoutOf(ctx.config, conversation) }, 'turn stopped: it ran past its time limit (TURN_TIMEOUT_MS, or CODEX_TURN_TIMEOUT_MS for codex)');
  }
  const sender = ctx.senders.get(conversation.platform);
  const fits = sender?.fitsOneMessage?.bind(sender);
  const commit = buildCommit(request, { messageLimit: sender?.messageLimit, ...(fits ? { fits } : {}), compressionNotice: ctx.config.COMPRESSION_NOTICE === 'on' });
  const committed = await commitTurn(ctx.db, commit);
  if (committed.kind === 'stale') {
    // Another holder settled this turn or took its input: its reply is never sent (issue 16, defect 2). Refused
    // with its row still running (its input taken, its session rotated), the row ends here as superseded: left
    // running, no later turn of the conversation could begin (found on a Redis Cluster, TURN_REDIS=cluster).
    await abandonTurn(ctx.db, turnId, 'lease_lost');
    ctx.metrics.countSupersededTurn('commit_refused');
    log.warn('commit refused: the turn was superseded; nothing sent');
    return { kind: 'lost' };
  }
  const { status } = executed;
  active.dispatch({ kind: 'committed', outcome: status });
  ctx.history.append(session.id, committed.messages);
  ctx.metrics.observeTurn(status, (performance.now() - prepared.startedAt) / 1000);
  if (status === 'completed' && executed.model) ctx.metrics.countModelAnswer(executed.model);
  const event = { conversationId: conversation.id, sessionId: session.id, turnId };
  if (status === 'interrupted' || status === 'cancelled') await ctx.emit({ type: 'turn.interrupted', ...event, reason: active.state.stopReason });
  await ctx.emit({ type: 'turn.ended', ...event, outcome: status });
  log.debug({ status, parts: commit.replies[0]?.chunks.length ?? 0 }, 'turn committed');
  if (executed.error === 'RUNTIME_CRASHED') log.warn({ crashStreak: committed.crashStreak }, 'the runtime child died mid-turn; the next turn gets a fresh one');
  // Runtime crashes in a row suspend like a restart loop (docs/codex.md): the same rule and announcement, applied now.
  // If this fails, the sweep's restart rules apply the same rule within SWEEP_INTERVAL_MS (and beginTurn refuses a turn meanwhile).
  if (committed.crashStreak !== null && crashStreakSuspends(committed.crashStreak, ctx.config.RESTART_SUSPEND_THRESHOLD)) {
    await suspendLoops(ctx).catch((err: unknown) => log.warn({ err }, 'crash-loop suspension not applied now; the sweep will'));
  }
  return { kind: 'committed', outbox: committed.outbox };
}

/** The commit's rows (pure): the input and what the runtime produced as transcript, the reply (and notices) as outbox parts. */
export function buildCommit(request: CommitInputs, shape: ReplyShape): CommitTurnInput {
  const { prepared, turnId, executed, input, active, claimId, media } = request;
  const { conversation, session } = prepared;
  const { entries, status, error } = executed;
  let { replyText } = executed;
  const steered = entries.filter((e): e is Extract<TranscriptEntry, { role: 'user' }> => e.role === 'user');
  const messages: NewTranscriptMessage[] = [
    ...input
      .filter((event) => !media?.dropped.has(event.id))
      .map((event) => ({ role: 'user' as const, content: event.text, tokens: prepared.inputTokenCounts?.get(event.id) ?? estimateMessageTokens(event.text), inboundEventId: event.id })),
    ...entries.map(toNewMessage),
  ];
  if (prepared.compressed && shape.compressionNotice && replyText !== null) replyText = `(Older messages were summarised to make room.)\n\n${replyText}`;
  const last = input[input.length - 1] as InboundEventRow;
  const { messageLimit } = shape;
  // The reply is stored too (outbox): text Postgres cannot store must not fail the commit (issue 17).
  const suspended = prepared.suspendedNotice === 'restart_loop' ? [notices.suspendedRestartLoop] : prepared.suspendedNotice === 'runtime_crash_loop' ? [notices.suspendedRuntimeCrashLoop] : [];
  // A streamed answer that did not complete keeps what the user saw, finished with the marker (never looking complete); a notice follows it.
  const stopped = executed.stream && status !== 'completed' && messageLimit !== undefined ? [normaliseText(stoppedStreamText(executed.stream.shown, messageLimit))] : [];
  const replyTexts = [...stopped, ...suspended, ...(media?.notices ?? []), ...(replyText !== null ? [normaliseText(replyText)] : [])];
  const replies = messageLimit !== undefined ? replyTexts.map((text) => ({ platform: conversation.platform, target: last.replyTarget, chunks: splitMessage(text, messageLimit, shape.fits) })) : [];
  return {
    turnId,
    conversationId: conversation.id,
    sessionId: session.id,
    status,
    error,
    inboundEventIds: [...input.map((e) => e.id), ...steered.map((e) => e.inboundEventId)],
    messages,
    replies,
    claimFor: claimId,
    // The /stop that cancelled this turn says "Stopped." even if another worker ends up answering it.
    stoppedByEventId: cancellingStopOf(active.state, status),
    // Under the commit's fence: a superseded turn moves neither the session's thread nor the crash streak.
    ...(executed.runtimeThreadId ? { runtimeThreadId: executed.runtimeThreadId } : {}),
    ...(executed.runtimeSynced ? { runtimeSynced: true } : {}),
    ...(executed.model ? { model: executed.model } : {}),
    crashStreak: crashStreakChangeOf({ status, error }),
  };
}

/** Busy mode `steer`: input that arrived since the turn started joins it at the next model call. */
async function takeSteerInput(ctx: WorkerContext, active: ActiveTurn, reactions: TurnReactions): Promise<{ text: string; inboundEventId: number }[]> {
  const pending = await loadPendingInbound(ctx.db, active.conversationId, ctx.config.MAX_QUEUED_INPUT);
  const steered = steerableInput(pending, active.state.takenUpTo ?? 0);
  reactions.take(steered);
  const taken = steered.map((event) => ({ text: event.text, inboundEventId: event.id }));
  const lastTaken = taken.at(-1);
  if (lastTaken) active.dispatch({ kind: 'taken', upTo: lastTaken.inboundEventId });
  return taken;
}

// Tool results and model text can hold U+0000 or lone surrogates, which Postgres refuses: the commit would fail on every restart.
function toNewMessage(entry: TranscriptEntry): NewTranscriptMessage {
  const content = normaliseText(entry.content);
  if (entry.role === 'user') return { role: 'user', content, inboundEventId: entry.inboundEventId, tokens: estimateMessageTokens(content) };
  if (entry.role === 'tool') {
    return { role: 'tool', content, toolCallId: normaliseText(entry.toolCallId), toolName: normaliseText(entry.toolName), tokens: estimateMessageTokens(content) };
  }
  const toolCalls = (entry.toolCalls ?? []).map((call) => ({ ...call, id: normaliseText(call.id), name: normaliseText(call.name), arguments: normaliseText(call.arguments) }));
  return {
    role: 'assistant',
    content,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    tokens: estimateMessageTokens(content, toolCalls.map((c) => c.name + c.arguments).join('')),
  };
}
