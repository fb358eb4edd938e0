import type { PermissionProfile, TranscriptMessage } from '@switchboard/core';

/**
 * What a turn sends Codex besides the protocol's framing: the text input and
 * the sandbox settings of a permission profile (docs/codex.md, "Input" and
 * "Permission profiles").
 */

export interface TurnTextParts {
  /**
   * The session's transcript when the turn opens a NEW thread; on a thread
   * Codex already has, only the stored messages it never received
   * (RunTurnRequest.runtimeUnseen): Codex keeps its own context otherwise.
   */
  history: readonly TranscriptMessage[];
  /** The user's messages, oldest first. */
  input: readonly string[];
}

/** Longest tool output or argument text kept per message in the carried history. */
const maxCarriedChars = 2000;

/**
 * The one text item of `turn/start`: a compact transcript of the history when
 * a new thread must learn what came before (after compression the history
 * opens with its summary; a conversation that switched runtime brings its
 * OpenAI transcript), then the user's messages, last so the model reads them
 * as the request. Never the API-only notes: Codex stores this text in its
 * thread as the user's message and its compaction keeps or summarises it
 * (issue 29, defect 7); the notes go as developer instructions
 * (`developerInstructionsOf`).
 */
export function buildTurnText(parts: TurnTextParts): string {
  const sections: string[] = [];
  if (parts.history.length > 0) {
    sections.push(
      ['[Earlier conversation in this chat, for context:]', ...parts.history.map(renderHistoryMessage), '[End of earlier conversation.]'].join('\n'),
    );
  }
  sections.push(parts.input.join('\n\n'));
  return sections.join('\n\n');
}

/**
 * `developerInstructions` of `thread/start` and `thread/resume`: the
 * conversation's instructions, then this turn's API-only notes, each a
 * paragraph of its own (their text already says they come from the gateway,
 * not the user). Codex keeps developer instructions apart from the user's
 * messages, so a note is never stored as something the user said. Undefined
 * when there is nothing to send, so Codex's own defaults stay.
 */
export function developerInstructionsOf(parts: { instructions: string; notes: readonly string[] }): string | undefined {
  const paragraphs = [parts.instructions, ...parts.notes].map((text) => text.trim()).filter(Boolean);
  return paragraphs.length > 0 ? paragraphs.join('\n\n') : undefined;
}

/** One stored message as one line of the carried transcript. */
export function renderHistoryMessage(message: TranscriptMessage): string {
  if (message.kind === 'summary') return `Summary of what came before: ${message.content}`;
  if (message.role === 'user') return `User: ${message.content}`;
  if (message.role === 'tool') return `Tool ${message.toolName ?? 'result'} returned: ${clip(message.content)}`;
  const calls = (message.toolCalls ?? []).map((call) => `Assistant called ${call.name}(${clip(call.arguments)})`);
  return [message.content && `Assistant: ${message.content}`, ...calls].filter(Boolean).join('\n');
}

function clip(text: string): string {
  return text.length > maxCarriedChars ? `${text.slice(0, maxCarriedChars)}… [cut]` : text;
}

/** Codex's AskForApproval words (`codex-rs/app-server-protocol`, kebab-case). */
export type ApprovalPolicy = 'untrusted' | 'on-request' | 'never';

/**
 * When Codex asks before acting, per profile (docs/codex.md, "Permission
 * profiles"). `untrusted` asks before every command except Codex's own list
 * of known-safe reads (`ls`, `cat`, `grep`…); `on-request` runs commands
 * inside the sandbox and asks for anything beyond it (a write outside the
 * workspace, the network). Every profile used `on-request` before issue 30,
 * finding 1: read-only then asked for nothing the sandbox allowed, and full
 * access (no sandbox) asked for nothing at all.
 */
export function approvalPolicyOf(profile: PermissionProfile): ApprovalPolicy {
  if (profile === 'workspace-write') return 'on-request';
  if (profile === 'full-access-unattended') return 'never';
  return 'untrusted';
}

/** `thread/start` and `thread/resume` settings of a profile (SandboxMode words). */
export function threadSettingsOf(profile: PermissionProfile): { approvalPolicy: ApprovalPolicy; sandbox: 'read-only' | 'workspace-write' | 'danger-full-access' } {
  const sandbox = profile === 'read-only' || profile === 'workspace-write' ? profile : 'danger-full-access';
  return { approvalPolicy: approvalPolicyOf(profile), sandbox };
}

/**
 * The same profile as `turn/start`'s SandboxPolicy. Sent on every turn, so a
 * profile changed (or full access revoked) between turns takes effect at the
 * next turn, also on a thread started under the old one.
 */
export function sandboxPolicyOf(profile: PermissionProfile, cwd: string): Record<string, unknown> {
  if (profile === 'full-access' || profile === 'full-access-unattended') return { type: 'dangerFullAccess' };
  if (profile === 'read-only') return { type: 'readOnly', networkAccess: false };
  return { type: 'workspaceWrite', writableRoots: [cwd], networkAccess: false, excludeTmpdirEnvVar: false, excludeSlashTmp: false };
}
