// LOCAL STUB of branch codex-runtime's API (issue 21), so the worker's wiring
// typechecks before that branch lands. The lead deletes this file at merge and
// keeps codex-runtime's exports (codex-pool.ts, codex-options.ts) in
// packages/agent/src/index.ts. Nothing here runs a child.
import type { PermissionProfile } from '@switchboard/core';
import type { Logger } from 'pino';
import type { AgentRuntime } from '../agent-runtime.ts';

export interface CodexPoolOptions {
  command: string;
  idleMs: number;
  maxChildren: number;
  closeGraceMs?: number;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}

export interface CodexConversationOptions {
  cwd: string;
  profile: PermissionProfile;
  autoApprove: boolean;
}

export interface CodexPool {
  runtimeFor(conversationId: number, options: CodexConversationOptions): AgentRuntime;
  close(): Promise<void>;
  readonly size: number;
}

export function createCodexPool(_options: CodexPoolOptions): CodexPool {
  throw new Error('not implemented: the Codex runtime lands with branch codex-runtime');
}
