import { cancelledToolResult, type TranscriptEntry } from '../transcript-entry.ts';
import {
  agentMessageItemSchema,
  commandItemSchema,
  fileChangeItemSchema,
  parseLeniently,
  type CodexItem,
} from './codex-protocol.ts';

/**
 * How Codex's items become transcript entries (docs/codex.md, "Item
 * projection"): agent messages are assistant entries; a command execution is
 * a `shell` tool call and its result, a file change an `apply_patch` call and
 * its result, so the transcript keeps the same call → result pairs as the
 * OpenAI runtime's tools and the tool-tail rules apply unchanged. Other items
 * (reasoning, the user's own message, plans, web searches) are not stored.
 */

export const shellToolName = 'shell';
export const applyPatchToolName = 'apply_patch';

/** Whether an item becomes a tool call (counted in `toolIterations`). */
export function isToolItem(item: CodexItem): boolean {
  return item.type === 'commandExecution' || item.type === 'fileChange';
}

/** The entries of one completed item (none for items the transcript does not keep). */
export function projectCodexItem(item: CodexItem): TranscriptEntry[] {
  if (item.type === 'agentMessage') {
    const message = parseLeniently(agentMessageItemSchema, item);
    return message && message.text !== '' ? [{ role: 'assistant', content: message.text }] : [];
  }
  if (!isToolItem(item)) return [];
  return toolEntries(item, toolResultOf(item));
}

/**
 * The entries of a tool item that started but never completed (the turn was
 * interrupted or the child died): the call with the cancelled result, so every
 * call keeps its answer (docs/turns.md, "Busy input modes").
 */
export function projectUnfinishedItem(item: CodexItem): TranscriptEntry[] {
  return isToolItem(item) ? toolEntries(item, cancelledToolResult) : [];
}

/** The text of a completed agent message item, or undefined for any other item. */
export function agentMessageText(item: CodexItem): string | undefined {
  if (item.type !== 'agentMessage') return undefined;
  return parseLeniently(agentMessageItemSchema, item)?.text;
}

function toolEntries(item: CodexItem, result: string): TranscriptEntry[] {
  const name = item.type === 'commandExecution' ? shellToolName : applyPatchToolName;
  return [
    { role: 'assistant', content: '', toolCalls: [{ id: item.id, name, arguments: toolArgumentsOf(item) }] },
    { role: 'tool', toolCallId: item.id, toolName: name, content: result },
  ];
}

/** The call's arguments as JSON text: the command and its directory, or the changes. */
export function toolArgumentsOf(item: CodexItem): string {
  if (item.type === 'commandExecution') {
    const command = parseLeniently(commandItemSchema, item);
    return JSON.stringify({ command: commandText(command?.command), cwd: command?.cwd ?? null });
  }
  const changes = parseLeniently(fileChangeItemSchema, item)?.changes ?? [];
  return JSON.stringify({ changes: changes.map((change) => ({ path: change.path, kind: change.kind ?? null, diff: change.diff ?? '' })) });
}

function toolResultOf(item: CodexItem): string {
  if (item.type === 'commandExecution') {
    const command = parseLeniently(commandItemSchema, item);
    const status = command?.status ?? 'completed';
    if (status === 'declined') return 'declined: the command was not approved and did not run';
    const output = command?.aggregatedOutput ?? '';
    const exit = command?.exitCode === null || command?.exitCode === undefined ? '' : `exit code ${command.exitCode}`;
    const head = status === 'completed' ? exit || 'completed' : [status, exit].filter(Boolean).join(', ');
    return output === '' ? head : `${head}\n${output}`;
  }
  const change = parseLeniently(fileChangeItemSchema, item);
  const status = change?.status ?? 'completed';
  const paths = (change?.changes ?? []).map((entry) => entry.path).join(', ');
  if (status === 'declined') return `declined: the change was not approved and not applied${paths ? ` (${paths})` : ''}`;
  if (status === 'completed') return paths ? `applied: ${paths}` : 'applied';
  return paths ? `${status}: ${paths}` : status;
}

/** A command as one line: Codex sends a string, older servers an argv. */
export function commandText(command: string | readonly string[] | null | undefined): string {
  if (command === null || command === undefined) return '';
  return typeof command === 'string' ? command : command.join(' ');
}
