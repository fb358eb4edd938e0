import { mkdir, realpath } from 'node:fs/promises';
import { createCodexPool, type AgentRuntime, type AskUser, type CodexPool, type FallbackRuntime } from '@switchboard/agent';
import type { WorkerConfig } from '@switchboard/config';
import { isInsideDirectory, resolveAgentRuntime, resolvePermissionProfile, resolveWorkspacePath, type AgentRuntimeName } from '@switchboard/core';
import type { BeginTurnResult, ConversationRow } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { createChatAskUser, type ApprovalContext } from '../approvals/index.ts';
import { createCodexChildEnv } from '../codex/codex-home.ts';
import { checkCodexConfinement, confineChildEnv, type CodexConfinement } from '../codex/codex-sandbox.ts';

/**
 * Which runtime runs a conversation's turn (docs/codex.md): its own setting
 * (`conversations.runtime`, set by an operator), else AGENT_RUNTIME. An
 * OpenAI turn asks the model an operator chose for the conversation
 * (`conversations.model`, docs/turns.md "Model fallbacks") first, else the
 * configured order; the Codex runtime picks its own model and ignores it. The
 * OpenAI runtime is built once per worker; Codex children come from one pool
 * per worker process, created when the first Codex turn runs and closed on
 * shutdown, each conversation working in its own directory under
 * CODEX_WORKSPACES.
 */
export interface TurnRuntimes {
  /** The runtime of this conversation's next turn, or why it cannot run (a value: the turn ends with a notice). */
  runtimeFor(conversation: ConversationRow): Promise<RuntimeChoice>;
  /** Closes the Codex children, if any were started (graceful shutdown, after the drain). */
  close(): Promise<void>;
}

export type RuntimeChoice =
  | { kind: 'ready'; name: AgentRuntimeName; runtime: AgentRuntime }
  | { kind: 'workspace_refused'; path: string; reason: string }
  /** CODEX_SANDBOX=bwrap and bubblewrap cannot run here: no Codex child is started (docs/codex.md, "How a child is confined"). */
  | { kind: 'sandbox_unavailable'; reason: string }
  /** The chosen model is not one the worker is configured with (MODEL_NAME or MODEL_FALLBACKS): the turn fails with a notice. */
  | { kind: 'model_not_configured'; model: string };

type RuntimeConfig = Pick<
  WorkerConfig,
  | 'AGENT_RUNTIME'
  | 'CODEX_COMMAND'
  | 'CODEX_WORKSPACES'
  | 'CODEX_HOMES'
  | 'CODEX_ENV_PASSTHROUGH'
  | 'CODEX_IDLE_MS'
  | 'CODEX_MAX_CHILDREN'
  | 'CODEX_MAX_CHILDREN_PER_USER'
  | 'CODEX_ALLOW_FULL_ACCESS'
  | 'CODEX_SANDBOX'
  | 'CODEX_SANDBOX_READ_PATHS'
  | 'CODEX_SANDBOX_WRITE_PATHS'
  | 'CODEX_SANDBOX_NETWORK'
  | 'CODEX_SANDBOX_ALLOW_HOSTS'
  | 'CODEX_SANDBOX_USER'
  | 'CODEX_SANDBOX_UID_BASE'
  | 'TURN_TIMEOUT_MS'
  | 'CODEX_TURN_TIMEOUT_MS'
>;

/** The runtime name a conversation's turns use now. */
export function runtimeNameOf(config: Pick<RuntimeConfig, 'AGENT_RUNTIME'>, conversation: Pick<ConversationRow, 'runtime'>): AgentRuntimeName {
  return resolveAgentRuntime(conversation.runtime, config.AGENT_RUNTIME);
}

/** The turn's time budget: CODEX_TURN_TIMEOUT_MS for a Codex turn, TURN_TIMEOUT_MS otherwise. */
export function turnTimeoutOf(config: RuntimeConfig, conversation: Pick<ConversationRow, 'runtime'>): number {
  return runtimeNameOf(config, conversation) === 'codex' ? config.CODEX_TURN_TIMEOUT_MS : config.TURN_TIMEOUT_MS;
}

export function createTurnRuntimes(config: RuntimeConfig, openai: FallbackRuntime, log: Logger): TurnRuntimes {
  let pool: CodexPool | undefined;
  // Checked once, as the worker starts, so a missing bubblewrap is said at start and not at a user's first Codex turn.
  const confinement = checkCodexConfinement(config, log.child({ runtime: 'codex' })).catch(
    (err: unknown): CodexConfinement => ({ kind: 'unavailable', reason: `the bubblewrap check failed: ${err instanceof Error ? err.message : String(err)}` }),
  );
  const codexPool = (): CodexPool => {
    pool ??= createCodexPool({
      command: config.CODEX_COMMAND,
      idleMs: config.CODEX_IDLE_MS,
      maxChildren: config.CODEX_MAX_CHILDREN,
      maxChildrenPerUser: config.CODEX_MAX_CHILDREN_PER_USER,
      logger: log.child({ runtime: 'codex' }),
      childEnv: codexChildEnv(config, confinement),
    });
    return pool;
  };
  return {
    async runtimeFor(conversation) {
      const name = runtimeNameOf(config, conversation);
      if (name === 'openai') {
        const chosen = openai.withModel(conversation.model === null ? null : { model: conversation.model, fallback: conversation.modelFallback });
        return chosen.kind === 'ready' ? { kind: 'ready', name, runtime: chosen.runtime } : { kind: 'model_not_configured', model: chosen.model };
      }
      const confined = await confinement;
      if (confined.kind === 'unavailable') return { kind: 'sandbox_unavailable', reason: confined.reason };
      const workspace = await ensureWorkspace(config.CODEX_WORKSPACES, conversation.id);
      if (workspace.kind !== 'ready') return workspace;
      const profile = resolvePermissionProfile(conversation.permissionProfile, config.CODEX_ALLOW_FULL_ACCESS);
      // autoApprove stays off: CODEX_AUTO_APPROVE is applied by the turn's askUser, which records each grant (docs/codex.md).
      return { kind: 'ready', name, runtime: codexPool().runtimeFor(conversation.id, { cwd: workspace.path, profile, autoApprove: false }) };
    },
    async close() {
      const closing = pool;
      pool = undefined;
      await closing?.close();
      // After the children: the proxy is their only way out while they finish.
      const confined = await confinement;
      if (confined.kind === 'bwrap') await confined.net?.close();
    },
  };
}

/**
 * Each child gets its conversation's own directories and an allow-listed
 * environment, never the worker's (docs/codex.md, "What a child gets"), and
 * runs in a sandbox that shows it nothing else of the machine ("How a child
 * is confined").
 */
function codexChildEnv(config: RuntimeConfig, confinement: Promise<CodexConfinement>) {
  const prepare = createCodexChildEnv({ homesRoot: config.CODEX_HOMES, passthrough: config.CODEX_ENV_PASSTHROUGH, source: process.env });
  const workspaceOf = async (id: number) => {
    const workspace = await ensureWorkspace(config.CODEX_WORKSPACES, id);
    return workspace.kind === 'ready' ? workspace.path : undefined;
  };
  return confineChildEnv(prepare, confinement, workspaceOf);
}

/** A turn whose runtime cannot run logs why (one line) and fails with a notice; the code it fails with (turns.error). Never a crash: nothing is counted. */
export function logRefusedRuntime(choice: Exclude<RuntimeChoice, { kind: 'ready' }>, log: Logger): string {
  if (choice.kind === 'model_not_configured') {
    log.error({ code: 'MODEL_NOT_CONFIGURED', model: choice.model }, "the conversation's chosen model is not MODEL_NAME nor in MODEL_FALLBACKS; the turn fails with a notice");
    return 'MODEL_NOT_CONFIGURED';
  }
  if (choice.kind === 'sandbox_unavailable') {
    log.error({ code: 'CODEX_SANDBOX_UNAVAILABLE', reason: choice.reason }, 'codex turn refused: CODEX_SANDBOX=bwrap and bubblewrap cannot run here (see the worker\'s start); the turn fails with a notice');
    return 'CODEX_SANDBOX_UNAVAILABLE';
  }
  log.error({ workspace: choice.path, reason: choice.reason }, 'codex workspace refused (outside CODEX_WORKSPACES, or no valid root); the turn fails with a notice');
  return 'WORKSPACE_REFUSED';
}

/**
 * `<root>/<conversation id>`, created if missing, and checked again once
 * real: the real directory must lie inside the real root, so a symbolic
 * link put in the root (or a root that moved) cannot send a conversation's
 * commands anywhere else.
 */
export async function ensureWorkspace(root: string, conversationId: number): Promise<{ kind: 'ready'; path: string } | { kind: 'workspace_refused'; path: string; reason: string }> {
  const planned = resolveWorkspacePath(root, conversationId);
  if (!planned.ok) return { kind: 'workspace_refused', path: root, reason: planned.reason };
  await mkdir(planned.path, { recursive: true, mode: 0o700 });
  const [realRoot, realPath] = await Promise.all([realpath(root), realpath(planned.path)]);
  if (!isInsideDirectory(realRoot, realPath)) return { kind: 'workspace_refused', path: planned.path, reason: 'outside_root' };
  return { kind: 'ready', path: realPath };
}

/** The turn that asks the chat user to approve an action (a Codex command or file change). */
export interface AskingTurn {
  conversationId: number;
  platform: string;
  replyTarget: Record<string, unknown>;
  /** The user whose message started the turn (turns.user_key, `platform:account:user`): who may answer besides APPROVERS; null for a triggered turn (APPROVERS only). */
  askedOfUserKey: string | null;
  /** The running-turn row's insert: the approval is stored against the turn's id. */
  begin: Promise<BeginTurnResult>;
}

/**
 * The runtime's `askUser` for one turn (docs/codex.md, "Approvals in chat"):
 * `createChatAskUser` (approvals/) built once the turn's row exists, one per
 * turn so its questions go one at a time. A turn that did not begin asks
 * nobody: `unanswered`, which the runtime takes as a refusal (fail closed).
 */
export function createTurnAskUser(ctx: ApprovalContext, turn: AskingTurn): AskUser {
  let asking: Promise<AskUser | undefined> | undefined;
  return async (question, signal) => {
    asking ??= turn.begin.then(
      (begun) =>
        begun.kind === 'begun'
          ? createChatAskUser(ctx, { conversationId: turn.conversationId, turnId: begun.turnId, platform: turn.platform, replyTarget: turn.replyTarget, askedOfUserKey: turn.askedOfUserKey })
          : undefined,
      () => undefined,
    );
    const ask = await asking;
    return ask ? ask(question, signal) : { decision: 'unanswered' };
  };
}
