import type { TurnFailure } from '@switchboard/agent';

/**
 * The lines the user sees when a turn produced no answer (a turn never ends
 * silently), in one place so they are read and changed together. Media
 * refusals are core's `mediaNotices`; command replies are handle-command's.
 */
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
  /** Prefixed to the reply of a turn whose preflight compression summarised older messages (COMPRESSION_NOTICE=on). */
  compressed: '(Older messages were summarised to make room.)',
} as const;

/** The model could not answer: the notice its failure's code calls for. */
export function noticeForFailure(code: TurnFailure['code']): string {
  if (code === 'MODEL_RATE_LIMITED') return notices.rateLimited;
  if (code === 'RUNTIME_CRASHED') return notices.runtimeCrashed;
  return code === 'MODEL_REFUSED' ? notices.refused : notices.failed;
}
