import type { ApprovalAnswer, ApprovalQuestion } from '../agent-runtime.ts';
import {
  commandApprovalParamsSchema,
  commandItemSchema,
  fileChangeApprovalParamsSchema,
  fileChangeItemSchema,
  legacyExecApprovalParamsSchema,
  legacyPatchApprovalParamsSchema,
  parseLeniently,
  type CodexItem,
} from './codex-protocol.ts';
import { commandText } from './codex-items.ts';

/**
 * The approval requests Codex sends, in both vocabularies (docs/codex.md,
 * "Approvals"): the current `item/*\/requestApproval` answered with
 * accept | acceptForSession | decline | cancel, and the older
 * `execCommandApproval` / `applyPatchApproval` answered with the snake_case
 * ReviewDecision values the server deserialises (approved |
 * approved_for_session | denied).
 */
export type ApprovalRequestKind = 'command' | 'file_change' | 'legacy_command' | 'legacy_file_change';

// A Map, not an object: a method named `toString` must not find Object.prototype's.
const approvalMethods = new Map<string, ApprovalRequestKind>([
  ['item/commandExecution/requestApproval', 'command'],
  ['item/fileChange/requestApproval', 'file_change'],
  ['execCommandApproval', 'legacy_command'],
  ['applyPatchApproval', 'legacy_file_change'],
]);

/** The kind of approval a server request asks for, or null for a request we do not serve (answered -32601). */
export function approvalKindOf(method: string): ApprovalRequestKind | null {
  return approvalMethods.get(method) ?? null;
}

export type CodexDecision = 'accept' | 'acceptForSession' | 'decline' | 'cancel';
export type LegacyDecision = 'approved' | 'approved_for_session' | 'denied';

/**
 * The answer on the wire. Fail closed: unanswered is a refusal. `cancelled`
 * is `cancel` (Codex interrupts the turn itself); the older vocabulary has no
 * cancel the turn goes on after, so it is `denied` and the caller interrupts
 * the turn (`interruptsTurn`).
 */
export function toWireDecision(kind: ApprovalRequestKind, answer: ApprovalAnswer): CodexDecision | LegacyDecision {
  const legacy = kind === 'legacy_command' || kind === 'legacy_file_change';
  switch (answer.decision) {
    case 'approved':
      return legacy ? 'approved' : 'accept';
    case 'approved_for_session':
      return legacy ? 'approved_for_session' : 'acceptForSession';
    case 'cancelled':
      return legacy ? 'denied' : 'cancel';
    case 'denied':
    case 'unanswered':
      return legacy ? 'denied' : 'decline';
  }
}

/** Whether the runtime must send `turn/interrupt` itself after answering. */
export function interruptsTurn(kind: ApprovalRequestKind, answer: ApprovalAnswer): boolean {
  return answer.decision === 'cancelled' && (kind === 'legacy_command' || kind === 'legacy_file_change');
}

/** The item id a request is about (to find what item/started told us), if it names one. */
export function approvalItemId(kind: ApprovalRequestKind, params: unknown): string | undefined {
  if (kind === 'command') return parseLeniently(commandApprovalParamsSchema, params)?.itemId ?? undefined;
  if (kind === 'file_change') return parseLeniently(fileChangeApprovalParamsSchema, params)?.itemId ?? undefined;
  if (kind === 'legacy_command') return parseLeniently(legacyExecApprovalParamsSchema, params)?.callId ?? undefined;
  return parseLeniently(legacyPatchApprovalParamsSchema, params)?.callId ?? undefined;
}

/** The question put to the user, from the request and the item it is about (item/started carries the command or the changes). */
export function describeApproval(kind: ApprovalRequestKind, params: unknown, item: CodexItem | undefined): ApprovalQuestion {
  if (kind === 'command' || kind === 'legacy_command') return describeCommand(kind, params, item);
  return describeFileChange(kind, params, item);
}

function describeCommand(kind: ApprovalRequestKind, params: unknown, item: CodexItem | undefined): ApprovalQuestion {
  const request =
    kind === 'command' ? parseLeniently(commandApprovalParamsSchema, params) : parseLeniently(legacyExecApprovalParamsSchema, params);
  const started = item ? parseLeniently(commandItemSchema, item) : undefined;
  const command = commandText(request?.command ?? started?.command);
  const cwd = request?.cwd ?? started?.cwd;
  const lines = [command && `$ ${command}`, cwd && `in ${cwd}`, request?.reason && `reason: ${request.reason}`].filter(Boolean);
  return {
    kind: 'command',
    summary: command ? `run \`${oneLine(command)}\`` : 'run a command',
    ...(lines.length > 0 ? { detail: lines.join('\n') } : {}),
  };
}

function describeFileChange(kind: ApprovalRequestKind, params: unknown, item: CodexItem | undefined): ApprovalQuestion {
  const request =
    kind === 'file_change' ? parseLeniently(fileChangeApprovalParamsSchema, params) : parseLeniently(legacyPatchApprovalParamsSchema, params);
  const legacyFiles = kind === 'legacy_file_change' ? Object.keys(parseLeniently(legacyPatchApprovalParamsSchema, params)?.fileChanges ?? {}) : [];
  const itemFiles = item ? (parseLeniently(fileChangeItemSchema, item)?.changes ?? []).map((change) => change.path) : [];
  const paths = legacyFiles.length > 0 ? legacyFiles : itemFiles;
  const grantRoot = request?.grantRoot;
  // What matters most first (issue 30, finding 4): a write grant is in the summary and heads the detail, never after the paths.
  const grant = grantRoot ? `allow writes under ${grantRoot} for the rest of the session` : undefined;
  const lines = [grant && `${grant}:`, request?.reason && `reason: ${request.reason}`, ...paths].filter(Boolean);
  const what = paths.length === 1 ? `change ${paths[0]}` : paths.length > 1 ? `change ${paths.length} files` : 'change files';
  const summary = grant ? `${grant}, and ${what}` : what;
  return { kind: 'file_change', summary, ...(lines.length > 0 ? { detail: lines.join('\n') } : {}) };
}

/** The command on one line, whole: the question cuts it, keeping its head and its tail (core's keepHeadAndTail). */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
