import { estimateMessageTokens, type TranscriptEntry } from '@switchboard/agent';
import { crashStreakChangeOf, normaliseText, splitMessage, stoppedStreamText } from '@switchboard/core';
import type { CommitTurnInput, InboundEventRow, NewTranscriptMessage } from '@switchboard/db';
import { cancellingStopOf, type ActiveTurn } from './active-turn.ts';
import type { PreparedTurn } from './prepare-turn.ts';
import type { ResolvedInput } from './resolve-media.ts';
import { notices } from './turn-notices.ts';
import type { ExecutedTurn } from './turn.ts';

/** What buildCommit reads: the prepared turn, its row, what the runtime produced, its input and the claim its reply parts are committed under. */
export interface CommitInputs {
  prepared: Pick<PreparedTurn, 'conversation' | 'session' | 'compressed' | 'suspendedNotice'> & Partial<Pick<PreparedTurn, 'inputTokenCounts'>>;
  turnId: number;
  executed: ExecutedTurn;
  input: InboundEventRow[];
  active: Pick<ActiveTurn, 'state'>;
  claimId: string;
  /** What the input's files became: events kept out of the transcript, and their short replies (docs/media.md). */
  media?: Pick<ResolvedInput, 'dropped' | 'notices'>;
}

/** How replies are shaped: the platform's message limit (undefined: no sender, nothing to send) and COMPRESSION_NOTICE. */
export interface ReplyShape {
  messageLimit: number | undefined;
  /** The sender's check that a rendered part fits (PlatformSender.fitsOneMessage). */
  fits?: (part: string) => boolean;
  compressionNotice: boolean;
}

/** The commit's rows (pure): the input and what the runtime produced as transcript, the reply (and notices) as outbox parts. */
export function buildCommit(request: CommitInputs, shape: ReplyShape): CommitTurnInput {
  const { prepared, turnId, executed, input, active, claimId } = request;
  const { conversation, session } = prepared;
  const { entries, status, error } = executed;
  const steered = entries.filter((e): e is Extract<TranscriptEntry, { role: 'user' }> => e.role === 'user');
  const last = input[input.length - 1] as InboundEventRow;
  const { messageLimit } = shape;
  const replies = messageLimit !== undefined ? replyTextsOf(request, { ...shape, messageLimit }).map((text) => ({ platform: conversation.platform, target: last.replyTarget, chunks: splitMessage(text, messageLimit, shape.fits) })) : [];
  return {
    turnId,
    conversationId: conversation.id,
    sessionId: session.id,
    status,
    error,
    inboundEventIds: [...input.map((e) => e.id), ...steered.map((e) => e.inboundEventId)],
    messages: transcriptOf(request),
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

/** The transcript rows: the input the model read (not the dropped files' events), then what the runtime produced. */
function transcriptOf(request: CommitInputs): NewTranscriptMessage[] {
  const { prepared, executed, input, media } = request;
  return [
    ...input
      .filter((event) => !media?.dropped.has(event.id))
      .map((event) => ({ role: 'user' as const, content: event.text, tokens: prepared.inputTokenCounts?.get(event.id) ?? estimateMessageTokens(event.text), inboundEventId: event.id })),
    ...executed.entries.map(toNewMessage),
  ];
}

/** The texts the user is sent, in order: a cut-short stream's last text, a suspension notice, the files' short replies, the reply. */
function replyTextsOf(request: CommitInputs, shape: ReplyShape & { messageLimit: number }): string[] {
  const { prepared, executed, media } = request;
  const { status } = executed;
  let { replyText } = executed;
  if (prepared.compressed && shape.compressionNotice && replyText !== null) replyText = `${notices.compressed}\n\n${replyText}`;
  // The reply is stored too (outbox): text Postgres cannot store must not fail the commit (issue 17).
  const suspended = prepared.suspendedNotice === 'restart_loop' ? [notices.suspendedRestartLoop] : prepared.suspendedNotice === 'runtime_crash_loop' ? [notices.suspendedRuntimeCrashLoop] : [];
  // A streamed answer that did not complete keeps what the user saw, finished with the marker (never looking complete); a notice follows it.
  const stopped = executed.stream && status !== 'completed' ? [normaliseText(stoppedStreamText(executed.stream.shown, shape.messageLimit))] : [];
  return [...stopped, ...suspended, ...(media?.notices ?? []), ...(replyText !== null ? [normaliseText(replyText)] : [])];
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
