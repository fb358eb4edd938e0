import { AgentError, type TranscriptEntry } from '@switchboard/agent';
import { estimateMessageTokens, splitMessage } from '@switchboard/core';
import {
  beginTurn,
  commitTurn,
  ensureCurrentSession,
  loadConversation,
  loadSessionMessages,
  type InboundEventRow,
  type NewTranscriptMessage,
} from '@switchboard/db';
import { buildModelMessages } from './build-model-messages.ts';
import { startTypingIndicator } from './typing-indicator.ts';
import type { RunningTurn, WorkerContext } from './worker-context.ts';

/** Lines the user sees when a turn produced no answer (DESIGN §11: a turn never ends silently). */
export const notices = {
  failed: 'Sorry, something went wrong and I could not answer that. Please try again.',
  rateLimited: 'I am getting too many requests right now. Please try again in a minute.',
  refused: 'I cannot help with that request.',
  empty: 'I have no answer to that.',
} as const;

/**
 * Runs one turn for `input` (pending inbound events, oldest first) and commits
 * its result. The caller holds the conversation's lease.
 */
export async function runTurn(ctx: WorkerContext, conversationId: number, input: InboundEventRow[]): Promise<void> {
  const conversation = await loadConversation(ctx.db, conversationId);
  if (!conversation) return;
  const sessionId = await ensureCurrentSession(ctx.db, conversation);
  const { turnId } = await beginTurn(ctx.db, { conversationId, sessionId, workerId: ctx.workerId });
  const history = await loadSessionMessages(ctx.db, sessionId);
  const last = input[input.length - 1] as InboundEventRow;
  const sender = ctx.senders.get(conversation.platform);

  const running: RunningTurn = { turnId, controller: new AbortController() };
  ctx.running.set(conversationId, running);
  const typing = sender ? startTypingIndicator(sender, last.replyTarget, ctx.log) : undefined;
  const log = ctx.log.child({ conversationId, turnId });

  let entries: TranscriptEntry[] = [];
  let status: 'completed' | 'interrupted' | 'failed' = 'completed';
  let replyText: string | null = null;
  let error: string | undefined;
  try {
    const result = await ctx.runtime.runTurn({
      messages: buildModelMessages(
        ctx.config.SYSTEM_PROMPT,
        history,
        input.map((e) => e.text),
      ),
      signal: running.controller.signal,
    });
    entries = result.entries;
    if (result.outcome === 'interrupted') status = 'interrupted';
    else replyText = result.text.trim() === '' ? notices.empty : result.text;
  } catch (caught) {
    if (!(caught instanceof AgentError)) throw caught;
    log.warn({ code: caught.code, err: caught.cause }, 'turn failed');
    entries = caught.entries;
    status = 'failed';
    error = caught.code;
    replyText = caught.code === 'MODEL_RATE_LIMITED' ? notices.rateLimited : caught.code === 'MODEL_REFUSED' ? notices.refused : notices.failed;
  } finally {
    typing?.stop();
    ctx.running.delete(conversationId);
  }

  const messages: NewTranscriptMessage[] = [
    ...input.map((event) => ({ role: 'user' as const, content: event.text, tokens: estimateMessageTokens(event.text), inboundEventId: event.id })),
    ...entries.map(toNewMessage),
  ];
  const replies =
    replyText !== null && sender ? [{ platform: conversation.platform, target: last.replyTarget, chunks: splitMessage(replyText, sender.messageLimit) }] : [];
  await commitTurn(ctx.db, { turnId, conversationId, sessionId, status, error, inboundEventIds: input.map((e) => e.id), messages, replies });
  log.debug({ status, parts: replies[0]?.chunks.length ?? 0 }, 'turn committed');
}

function toNewMessage(entry: TranscriptEntry): NewTranscriptMessage {
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
