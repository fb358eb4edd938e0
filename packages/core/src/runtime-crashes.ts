import { restartLoopStartsAt } from './restart-rules.ts';

/**
 * A runtime child that dies mid-turn (RUNTIME_CRASHED, docs/codex.md
 * "Crashes and suspension") counts toward suspension like a restart: a
 * conversation whose turns keep killing their child is suspended at
 * RESTART_SUSPEND_THRESHOLD crashes in a row instead of taking a fresh child
 * for ever. The streak lives in `conversations.runtime_crash_streak`.
 */
export type CrashStreakChange = 'increment' | 'reset' | 'keep';

/** What a committed turn does to the streak: a crash adds one, a completed turn clears it, anything else (a stop, a model error, a timeout) leaves it. */
export function crashStreakChangeOf(turn: { status: string; error?: string | null }): CrashStreakChange {
  if (turn.status === 'completed') return 'reset';
  // An error nobody expected (UNEXPECTED, issue 29 defect 4) counts like a crash: a conversation that keeps failing so is suspended, never looped on.
  if (turn.status === 'failed' && (turn.error === 'RUNTIME_CRASHED' || turn.error === 'UNEXPECTED')) return 'increment';
  return 'keep';
}

/**
 * Whether the streak after a turn suspends the conversation: the restart-loop
 * rule's own bound (`restartLoopStartsAt`), which beginTurn and
 * suspendRestartLoops compare the streak with in SQL.
 */
export function crashStreakSuspends(streak: number, suspendThreshold: number): boolean {
  return streak >= restartLoopStartsAt(suspendThreshold);
}
