import { AgentError, type TranscriptEntry } from '@switchboard/agent';
import {
  apiOnlyNotes,
  estimateMessageTokens,
  estimateRequestTokens,
  findToolTail,
  needsCompression,
  parseChatCommand,
  resumesCutOffTurn,
  splitMessage,
  trimOldestToFit,
} from '@switchboard/core';
import {
  acknowledgeRecoveryNote,
  beginTurn,
  commitTurn,
  cutOffStaleTurn,
  ensureCurrentSession,
  loadConversation,
  loadPendingInbound,
  loadSession,
  type ConversationRow,
  type InboundEventRow,
  type NewTranscriptMessage,
  type OutboxRow,
  type SessionRow,
  type TurnState,
} from '@switchboard/db';
import { markTaken, type ActiveTurn } from './active-turn.ts';
import { buildModelMessages } from './build-model-messages.ts';
import { compressConversation } from './compress-session.ts';
import { startTypingIndicator } from './typing-indicator.ts';
import type { WorkerContext } from './worker-context.ts';

/** Lines the user sees when a turn produced no answer (DESIGN §11: a turn never ends silently). */
export const notices = {
  failed: 'Sorry, something went wrong and I could not answer that. Please try again.',
  rateLimited: 'I am getting too many requests right now. Please try again in a minute.',
  refused: 'I cannot help with that request.',
  empty: 'I have no answer to that.',
  suspendedRestartLoop:
    'Your previous session was paused after it was cut off by repeated restarts, so this is a fresh start. An operator can restore the earlier session.',
} as const;

/**
 * Runs one turn for `input` (pending inbound events, oldest first) and commits
 * its result; returns the outbox rows now waiting to be delivered. The caller
 * holds the conversation's lease, registered `active` before reading `input`,
 * and passes the state it read `input` with.
 */
export async function runTurn(ctx: WorkerContext, state: TurnState, input: InboundEventRow[], active: ActiveTurn): Promise<OutboxRow[]> {
  const { conversation } = state;
  const conversationId = conversation.id;
  // First message after a restart-loop suspension: a fresh session starts here, and the user is told once (DESIGN §9).
  const suspendedNotice = conversation.status === 'suspended' && conversation.currentSessionId === null && conversation.suspendReason === 'restart_loop';
  const inputTokens = input.reduce((sum, event) => sum + estimateMessageTokens(event.text), 0);
  let session = state.session?.status === 'active' ? state.session : await resolveCurrentSession(ctx, conversation);
  const contextTokens = ctx.config.MODEL_CONTEXT_TOKENS;
  const requestTokens = () => estimateRequestTokens({ fixedTokens: ctx.fixedRequestTokens, sessionTokens: session.tokenEstimate, inputTokens });

  // Preflight compression (DESIGN §8): the estimate is kept per session, so this check is O(new input).
  let compressed = false;
  if (needsCompression({ fixedTokens: ctx.fixedRequestTokens, sessionTokens: session.tokenEstimate, inputTokens, contextTokens, threshold: ctx.config.COMPRESSION_THRESHOLD })) {
    const result = await compressConversation(ctx, conversationId, { force: false, signal: active.controller.signal });
    compressed = result.outcome === 'compressed';
    // Winner, loser or failure: go on with whatever session is current now.
    const current = await loadConversation(ctx.db, conversationId);
    if (current) session = await resolveCurrentSession(ctx, current);
  }
  const sessionId = session.id;

  // The last turn still running can only be a lost worker's (this process holds the lease): cut it off first.
  if (state.lastTurn?.status === 'running') await cutOffStaleTurn(ctx.db, conversationId);
  const resumes = resumesCutOffTurn(state.lastTurn, session);
  // The running-turn row is written while the model works: nothing in the
  // request depends on it. It starts two event-loop turns from now: when the
  // history comes from the cache (the usual case), the SDK has built and sent
  // the request by then, so the row's write, its answer and the turn.started
  // publish do not hold the request up (measurable with a fast model,
  // docs/turns.md). When the history must be read first, the row is simply
  // written before the request, as it always was.
  const begin = afterModelRequestSent().then(() => beginTurn(ctx.db, { conversationId, sessionId, workerId: ctx.workerId })).then(async (begun) => {
    await ctx.emit({ type: 'turn.started', conversationId, sessionId, turnId: begun.turnId });
    return begun;
  });
  // Awaited before the commit; this only keeps an early exit from leaving its failure unhandled.
  begin.catch(() => undefined);
  const history = await ctx.history.load(session);
  const startedAt = performance.now();
  const log = ctx.log.child({ conversationId, sessionId });

  // API-only notes (DESIGN §7, §9): built for this request, never stored.
  const notes: string[] = [];
  const tail = findToolTail(history);
  const recoveryKey = tail && tail.key !== session.recoveryAckKey ? tail.key : null;
  if (recoveryKey) notes.push(apiOnlyNotes.recovery);
  if (resumes) notes.push(apiOnlyNotes.resume);

  // Compression could not bring the request under the context: leave the
  // oldest messages out of this one request (never out of the transcript).
  let sentHistory = history;
  if (requestTokens() > contextTokens) {
    const notesTokens = notes.reduce((sum, note) => sum + estimateMessageTokens(note), 0);
    // A child session's summary stands for everything before it: it goes last, not first.
    const summary = history[0]?.kind === 'summary' ? history[0] : undefined;
    const budget = contextTokens - ctx.fixedRequestTokens - inputTokens - notesTokens - (summary?.tokens ?? 0);
    const trimmed = trimOldestToFit(summary ? history.slice(1) : history, budget);
    sentHistory = summary ? [summary, ...trimmed.sent] : trimmed.sent;
    ctx.metrics.countTrimmedRequest(trimmed.dropped);
    log.warn({ dropped: trimmed.dropped, sessionTokens: session.tokenEstimate }, 'request over the context; oldest messages left out of this request');
  }

  const last = input[input.length - 1] as InboundEventRow;
  const sender = ctx.senders.get(conversation.platform);
  const typing = sender ? startTypingIndicator(sender, last.replyTarget, ctx.log) : undefined;

  let entries: TranscriptEntry[] = [];
  let status: 'completed' | 'interrupted' | 'failed' | 'cancelled' = 'completed';
  let replyText: string | null = null;
  let error: string | undefined;
  try {
    // Interrupted during compression: the summary is committed, the turn ends without a model call.
    if (active.controller.signal.aborted) throw new TurnStoppedBeforeModel();
    const result = await ctx.runtime.runTurn({
      messages: buildModelMessages(
        ctx.config.SYSTEM_PROMPT,
        sentHistory,
        notes,
        input.map((e) => e.text),
      ),
      signal: active.controller.signal,
      oneShotNotes: notes,
      onModelAccepted: async (iteration) => {
        if (iteration !== 0) return;
        if (recoveryKey) {
          ctx.metrics.countRecoveryNote('recovery');
          await acknowledgeRecoveryNote(ctx.db, sessionId, recoveryKey);
        }
        if (resumes) ctx.metrics.countRecoveryNote('resume');
      },
      takeSteerInput: active.mode === 'steer' ? () => takeSteerInput(ctx, active) : undefined,
    });
    entries = result.entries;
    if (result.outcome === 'interrupted') status = active.stopReason === 'stop' ? 'cancelled' : 'interrupted';
    else replyText = result.text.trim() === '' ? notices.empty : result.text;
  } catch (caught) {
    if (caught instanceof TurnStoppedBeforeModel) status = active.stopReason === 'stop' ? 'cancelled' : 'interrupted';
    else if (caught instanceof AgentError) {
      log.warn({ code: caught.code, err: caught.cause }, 'turn failed');
      entries = caught.entries;
      status = 'failed';
      error = caught.code;
      replyText = caught.code === 'MODEL_RATE_LIMITED' ? notices.rateLimited : caught.code === 'MODEL_REFUSED' ? notices.refused : notices.failed;
    } else throw caught;
  } finally {
    typing?.stop();
  }

  const { turnId } = await begin;
  // Cut off by shutdown or a lost lease: commit nothing. The turn stays
  // `running` and its input pending, so the next lease holder resumes it once,
  // with the resume note, exactly as after a crash (DESIGN §9).
  if (active.stopReason === 'shutdown' || active.stopReason === 'lease_lost') {
    log.info({ turnId, reason: active.stopReason }, 'turn cut off; left for resume');
    return [];
  }

  const steered = entries.filter((e): e is Extract<TranscriptEntry, { role: 'user' }> => e.role === 'user');
  const messages: NewTranscriptMessage[] = [
    ...input.map((event) => ({ role: 'user' as const, content: event.text, tokens: estimateMessageTokens(event.text), inboundEventId: event.id })),
    ...entries.map(toNewMessage),
  ];
  if (compressed && ctx.config.COMPRESSION_NOTICE === 'on' && replyText !== null) replyText = `(Older messages were summarised to make room.)\n\n${replyText}`;
  const replyTexts = [...(suspendedNotice ? [notices.suspendedRestartLoop] : []), ...(replyText !== null ? [replyText] : [])];
  const replies = sender ? replyTexts.map((text) => ({ platform: conversation.platform, target: last.replyTarget, chunks: splitMessage(text, sender.messageLimit) })) : [];
  active.outcome = status;
  const committed = await commitTurn(ctx.db, {
    turnId,
    conversationId,
    sessionId,
    status,
    error,
    inboundEventIds: [...input.map((e) => e.id), ...steered.map((e) => e.inboundEventId)],
    messages,
    replies,
  });
  ctx.history.append(sessionId, committed.messages);
  ctx.metrics.observeTurn(status, (performance.now() - startedAt) / 1000);
  if (status === 'interrupted' || status === 'cancelled') await ctx.emit({ type: 'turn.interrupted', conversationId, sessionId, turnId, reason: active.stopReason });
  await ctx.emit({ type: 'turn.ended', conversationId, sessionId, turnId, outcome: status });
  log.debug({ turnId, status, parts: replies[0]?.chunks.length ?? 0 }, 'turn committed');
  return committed.outbox;
}

/** Resolves two event-loop turns from now (see its use in runTurn). */
function afterModelRequestSent(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
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

class TurnStoppedBeforeModel extends Error {}

/** Busy mode `steer`: input that arrived since the turn started joins it at the next model call. */
async function takeSteerInput(ctx: WorkerContext, active: ActiveTurn): Promise<{ text: string; inboundEventId: number }[]> {
  const pending = await loadPendingInbound(ctx.db, active.conversationId, ctx.config.MAX_QUEUED_INPUT);
  const taken: { text: string; inboundEventId: number }[] = [];
  for (const event of pending) {
    if (event.id <= (active.takenUpTo ?? 0)) continue;
    if (parseChatCommand(event.text)) break;
    taken.push({ text: event.text, inboundEventId: event.id });
  }
  const lastTaken = taken.at(-1);
  if (lastTaken) markTaken(active, lastTaken.inboundEventId);
  return taken;
}

function toNewMessage(entry: TranscriptEntry): NewTranscriptMessage {
  if (entry.role === 'user') return { role: 'user', content: entry.content, inboundEventId: entry.inboundEventId, tokens: estimateMessageTokens(entry.content) };
  if (entry.role === 'tool') {
    return { role: 'tool', content: entry.content, toolCallId: entry.toolCallId, toolName: entry.toolName, tokens: estimateMessageTokens(entry.content) };
  }
  const toolCalls = entry.toolCalls ?? [];
  return {
    role: 'assistant',
    content: entry.content,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    tokens: estimateMessageTokens(entry.content, toolCalls.map((c) => c.name + c.arguments).join('')),
  };
}
