import { estimateMessageTokens, estimateMessageTokensPaced } from '@switchboard/agent';
import {
  apiOnlyNotes,
  estimateRequestTokens,
  findToolTail,
  needsCompression,
  restartLoopStartsAt,
  trimOldestToFit,
} from '@switchboard/core';
import { beginTurn, ensureCurrentSession, loadConversation, loadSession, type BeginTurnResult, type ConversationRow, type InboundEventRow, type MessageRow, type SessionRow, type TurnState } from '@switchboard/db';
import type { ActiveTurn } from './active-turn.ts';
import { compressConversation } from '../compression/compress-session.ts';
import type { WorkerContext } from '../worker-context.ts';

/** Why the running-turn row was not written. */
export type NotBegun = Exclude<BeginTurnResult, { kind: 'begun' }>;

/** What preparing reads of a turn (turn.ts's Turn, with its input once its files are read). */
export interface TurnToPrepare {
  state: TurnState;
  input: InboundEventRow[];
  active: ActiveTurn;
}

/** Everything the model request of a turn is built from, and the turn's row as it is being written. */
export interface PreparedTurn {
  conversation: ConversationRow;
  session: SessionRow;
  /** The running-turn row's insert: started before any work on the input, awaited before compression and before the commit. */
  begin: Promise<BeginTurnResult>;
  /** The history sent (the oldest messages may be left out of this one request). */
  sentHistory: MessageRow[];
  notes: string[];
  /** The unread tool tail's key when this request carries the recovery note. */
  recoveryKey: string | null;
  resumes: boolean;
  compressed: boolean;
  /** A preflight compression ran (whatever its outcome): the turn waited on a summary, which outlives a lost lease. */
  summarised: boolean;
  /** First message after a restart-loop or runtime-crash-loop suspension: the user is told once, why (docs/restarts.md, docs/codex.md). */
  suspendedNotice: LoopSuspension | null;
  startedAt: number;
  /** Each input event's token estimate (by event id), counted once here and stored by the commit. */
  inputTokenCounts: ReadonlyMap<number, number>;
}

/**
 * The turn's preparation: its running-turn row, preflight compression, the
 * session, the history and the API-only notes. The row is written first, so
 * a worker that dies at any later point (during compression too) leaves a
 * running turn that is cut off and counted (issue 16, defect 4). Without
 * compression the insert runs alongside the model request (a round trip
 * saved on every turn; docs/turns.md); the request's acceptance waits for it.
 * Returns the refusal when the row was not written.
 */
export async function prepareTurn(ctx: WorkerContext, turn: TurnToPrepare): Promise<PreparedTurn | { kind: 'not_begun'; begun: NotBegun }> {
  const { state, input, active } = turn;
  const { conversation } = state;
  const conversationId = conversation.id;
  const startedAt = performance.now();
  const suspendedNotice = loopSuspensionOf(conversation);
  // Counted once (the commit stores these), in slices for a long document: the event loop is never held for a whole file.
  const inputTokenCounts = await countInputTokens(input);
  const inputTokens = [...inputTokenCounts.values()].reduce((sum, n) => sum + n, 0);
  let session = state.session?.status === 'active' ? state.session : await resolveCurrentSession(ctx, conversation);
  const begin = beginTurn(ctx.db, {
    conversationId,
    sessionId: session.id,
    workerId: ctx.workerId,
    suspendThreshold: restartLoopStartsAt(ctx.config.RESTART_SUSPEND_THRESHOLD),
    firstInputEventId: (input[0] as InboundEventRow).id,
    maxRunningPerUser: ctx.config.USER_MAX_RUNNING_TURNS,
  }).then(async (begun) => {
    if (begun.kind === 'begun') await ctx.emit({ type: 'turn.started', conversationId, sessionId: session.id, turnId: begun.turnId });
    else active.dispatch({ kind: 'stop', reason: 'not_begun' });
    return begun;
  });
  // Awaited before the commit; this only keeps an early exit from leaving its failure unhandled.
  begin.catch(() => undefined);

  // Preflight compression (docs/compression.md): the estimate is kept per session, so this check is O(new input).
  let compressed = false;
  let summarised = false;
  if (needsCompression({ fixedTokens: ctx.fixedRequestTokens, sessionTokens: session.tokenEstimate, inputTokens, contextTokens: ctx.config.MODEL_CONTEXT_TOKENS, threshold: ctx.config.COMPRESSION_THRESHOLD })) {
    const begun = await begin;
    if (begun.kind !== 'begun') return { kind: 'not_begun', begun };
    summarised = true;
    const result = await compressConversation(ctx, conversationId, { force: false, signal: active.controller.signal });
    compressed = result.outcome === 'compressed';
    // Winner, loser or failure: go on with whatever session is current now.
    const current = await loadConversation(ctx.db, conversationId);
    if (current) session = await resolveCurrentSession(ctx, current);
  }

  const history = await ctx.history.load(session);
  // API-only notes (docs/turns.md, "The recovery note"; docs/restarts.md, "Resume once"): built for this request, never stored.
  const tail = findToolTail(history);
  const owedRecovery = tail && tail.key !== session.recoveryAckKey ? tail.key : null;
  // Owed from a cut-off until a request carrying it is accepted, whatever ended the turns in between (issue 29, defect 5).
  const resumes = session.resumeOwed;
  const sentHistory = fitHistory(ctx, { conversationId, session, history, notes: notesFor(owedRecovery !== null, resumes), inputTokens });
  // The recovery note explains the unanswered tool calls just before it: if trimming left them out of this request it would
  // refer to nothing, so it is neither sent nor acknowledged, and stays owed for a request that shows the tail.
  const recoveryKey = owedRecovery !== null && tail && sentHistory.includes(history[tail.start] as MessageRow) ? owedRecovery : null;
  const notes = notesFor(recoveryKey !== null, resumes);
  return { conversation, session, begin, sentHistory, notes, recoveryKey, resumes, compressed, summarised, suspendedNotice, startedAt, inputTokenCounts };
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Each input event's token estimate, by event id. */
async function countInputTokens(input: readonly InboundEventRow[]): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const event of input) counts.set(event.id, await estimateMessageTokensPaced(event.text, yieldToEventLoop));
  return counts;
}

/** The notes a request carries, in the order the model reads them. */
function notesFor(recovery: boolean, resume: boolean): string[] {
  return [...(recovery ? [apiOnlyNotes.recovery] : []), ...(resume ? [apiOnlyNotes.resume] : [])];
}

export type LoopSuspension = 'restart_loop' | 'runtime_crash_loop';

/** A conversation the restart-loop guard suspended, whose next message starts a fresh session now. */
function loopSuspensionOf(conversation: ConversationRow): LoopSuspension | null {
  if (conversation.status !== 'suspended' || conversation.currentSessionId !== null) return null;
  return conversation.suspendReason === 'restart_loop' || conversation.suspendReason === 'runtime_crash_loop' ? conversation.suspendReason : null;
}

/** A request's parts that fitHistory weighs: the session's history, the notes and the input's tokens. */
interface RequestToFit {
  conversationId: number;
  session: SessionRow;
  history: readonly MessageRow[];
  notes: string[];
  inputTokens: number;
}

/**
 * Compression could not bring the request under the context: leave the
 * oldest messages out of this one request (never out of the transcript).
 */
function fitHistory(ctx: WorkerContext, request: RequestToFit): MessageRow[] {
  const { conversationId, session, history, notes, inputTokens } = request;
  const contextTokens = ctx.config.MODEL_CONTEXT_TOKENS;
  if (estimateRequestTokens({ fixedTokens: ctx.fixedRequestTokens, sessionTokens: session.tokenEstimate, inputTokens }) <= contextTokens) return [...history];
  const notesTokens = notes.reduce((sum, note) => sum + estimateMessageTokens(note), 0);
  // A child session's summary stands for everything before it: it goes last, not first.
  const summary = history[0]?.kind === 'summary' ? history[0] : undefined;
  const budget = contextTokens - ctx.fixedRequestTokens - inputTokens - notesTokens - (summary?.tokens ?? 0);
  const trimmed = trimOldestToFit(summary ? history.slice(1) : history, budget);
  ctx.metrics.countTrimmedRequest(trimmed.dropped);
  ctx.log.warn({ conversationId, sessionId: session.id, dropped: trimmed.dropped, sessionTokens: session.tokenEstimate }, 'request over the context; oldest messages left out of this request');
  return summary ? [summary, ...trimmed.sent] : trimmed.sent;
}

/**
 * The slow path, when the state read found no active current session: the
 * conversation's first turn (the session is created here), or a reset,
 * resume or compression that moved the pointer since. Follows the pointer.
 */
async function resolveCurrentSession(ctx: WorkerContext, conversation: ConversationRow): Promise<SessionRow> {
  let sessionId = await ensureCurrentSession(ctx.db, conversation);
  if (conversation.currentSessionId === null) await ctx.emit({ type: 'session.started', conversationId: conversation.id, sessionId });
  let session = await loadSession(ctx.db, sessionId);
  if (session?.status !== 'active') {
    const current = await loadConversation(ctx.db, conversation.id);
    if (current) sessionId = await ensureCurrentSession(ctx.db, current);
    session = await loadSession(ctx.db, sessionId);
  }
  if (!session) throw new Error(`session ${sessionId} of conversation ${conversation.id} not found`);
  return session;
}
