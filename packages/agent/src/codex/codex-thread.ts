import type { Logger } from 'pino';
import type { RunTurnRequest } from '../agent-runtime.ts';
import type { CodexConnection } from './codex-connection.ts';
import { developerInstructionsOf, threadSettingsOf } from './codex-input.ts';
import type { CodexConversationOptions } from './codex-options.ts';
import { parseLeniently, threadResultSchema } from './codex-protocol.ts';
import { requestWithRetry, type OverloadRetry } from './codex-request-retry.ts';
import { endOfRequest, type TurnEnd } from './codex-turn-end.ts';

export interface ThreadContext {
  connection: CodexConnection;
  conversation: CodexConversationOptions;
  /** Threads this child has started or resumed: those need no `thread/resume`. */
  loadedThreads: Set<string>;
  logger: Logger;
  retry: OverloadRetry;
}

/** The thread a turn runs on; `isNew` when it was started now, so it has none of the conversation's context yet. */
export type ThreadOpening = { kind: 'open'; threadId: string; isNew: boolean } | { kind: 'ended'; end: TurnEnd };

/**
 * Continues the conversation's thread when the caller kept one (the same
 * child: already loaded; a new child after a restart: `thread/resume`), else
 * starts a new one. A thread Codex no longer knows is replaced by a new one,
 * which then gets the history as context (codex-input.ts).
 */
export async function openThread(context: ThreadContext, request: RunTurnRequest): Promise<ThreadOpening> {
  const { connection, conversation, loadedThreads, logger, retry } = context;
  // Developer instructions add to Codex's own; base instructions would replace the prompt Codex needs to work.
  // The API-only notes go there too, never in the user's text (issue 29, defect 7). Codex applies them only
  // when it loads the thread, so the pool gives a turn with notes a fresh child (codex-pool.ts).
  const developerInstructions = developerInstructionsOf(request);
  const settings = { cwd: conversation.cwd, ...threadSettingsOf(conversation.profile), ...(developerInstructions ? { developerInstructions } : {}) };
  // A stop while Codex opens the thread ends the turn at once: a thread answered late is only loaded for nothing.
  const asked = { retry, signal: request.signal, abandonOnAbort: true };
  const wanted = request.runtimeIds?.threadId;
  if (wanted && loadedThreads.has(wanted)) return { kind: 'open', threadId: wanted, isNew: false };
  if (wanted) {
    const resumed = await requestWithRetry(connection, 'thread/resume', { threadId: wanted, ...settings }, asked);
    if (resumed.kind === 'result') {
      const threadId = parseLeniently(threadResultSchema, resumed.result)?.thread.id ?? wanted;
      loadedThreads.add(threadId);
      return { kind: 'open', threadId, isNew: false };
    }
    if (resumed.kind !== 'error') return { kind: 'ended', end: endOfRequest('thread/resume', resumed) };
    logger.info({ threadId: wanted, error: resumed.error.message }, 'codex could not resume the thread; starting a new one with the history as context');
  }
  const started = await requestWithRetry(connection, 'thread/start', settings, asked);
  if (started.kind !== 'result') return { kind: 'ended', end: endOfRequest('thread/start', started) };
  const threadId = parseLeniently(threadResultSchema, started.result)?.thread.id;
  if (!threadId) return { kind: 'ended', end: { kind: 'failed', code: 'MODEL_FAILED', message: 'Codex answered thread/start without a thread id' } };
  loadedThreads.add(threadId);
  return { kind: 'open', threadId, isNew: true };
}
