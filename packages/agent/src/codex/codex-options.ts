import type { PermissionProfile } from '@switchboard/core';
import type { Logger } from 'pino';
import type { AgentRuntime } from '../agent-runtime.ts';
import type { OverloadRetry } from './codex-request-retry.ts';

export interface CodexPoolOptions {
  /** CODEX_COMMAND, e.g. "codex app-server": split into argv without a shell (simple quoting handled). */
  command: string;
  /** CODEX_IDLE_MS: a child with no turn for this long is closed. */
  idleMs: number;
  /** Children per worker process at most. */
  maxChildren: number;
  /**
   * Children one user's turns may hold at once on this worker (a turn waiting on an approval
   * holds its child for up to APPROVAL_TIMEOUT_SECONDS; issue 30, finding 8). Default: maxChildren.
   */
  maxChildrenPerUser?: number;
  /** Closing sends SIGTERM, then SIGKILL after this many ms (default 2000). */
  closeGraceMs?: number;
  logger: Logger;
  /**
   * The conversation's child's whole environment, prepared before each spawn
   * (the worker's: its own CODEX_HOME, TMPDIR and allow-list, docs/codex.md
   * "What a child gets"), and the command line it runs, given the pool's
   * (the worker's wraps it in bubblewrap, "How a child is confined"); a
   * failure fails the turn, never the worker.
   */
  childEnv?: (conversationId: number, argv: readonly string[]) => Promise<ChildEnvOutcome>;
  /** A fixed environment for every child, for tests; with neither, only pickAllowedEnv(process.env). Never process.env itself. */
  env?: Record<string, string | undefined>;
  /** After `turn/interrupt`, how long to wait for `turn/completed` before killing the child (default 5000). */
  interruptTimeoutMs?: number;
  /** How requests answered -32001 are retried (default 4 tries from 200 ms). */
  overloadRetry?: OverloadRetry;
}

/** `argv`, when given, is run instead of the pool's command (the same command inside a sandbox). */
export type ChildEnvOutcome = { kind: 'ready'; env: Record<string, string | undefined>; argv?: string[] } | { kind: 'failed'; reason: string };

export interface CodexConversationOptions {
  /** Absolute; the caller creates it under CODEX_WORKSPACES. */
  cwd: string;
  profile: PermissionProfile;
  /** Answer every approval "accept" without asking (non-interactive use). */
  autoApprove: boolean;
}

export interface CodexPool {
  /** The runtime for one conversation: reuses its live child; spawns one lazily at runTurn if none or the old one died. */
  runtimeFor(conversationId: number, options: CodexConversationOptions): AgentRuntime;
  /** Closes every child (terminate → kill). */
  close(): Promise<void>;
  /** Live children. */
  readonly size: number;
}
