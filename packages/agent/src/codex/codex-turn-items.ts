import type { TranscriptEntry } from '../transcript-entry.ts';
import type { CodexItem } from './codex-protocol.ts';
import { agentMessageText, isToolItem, projectCodexItem, projectUnfinishedItem } from './codex-items.ts';

/**
 * The items of one running turn: what started (so an approval can name its
 * command, and an unfinished tool call can still get its result) and what
 * completed, in completion order.
 */
export interface TurnItems {
  started(item: CodexItem): void;
  completed(item: CodexItem): void;
  /** The item item/started told us about, by id. */
  find(id: string): CodexItem | undefined;
  /** The turn's entries: completed items in order, then every unfinished tool call with the cancelled result. */
  entries(): TranscriptEntry[];
  /** Tool items that became entries. */
  readonly toolIterations: number;
  /** The last completed agent message's text ('' if none). */
  readonly finalText: string;
}

export function createTurnItems(): TurnItems {
  const open = new Map<string, CodexItem>();
  const done: CodexItem[] = [];
  const doneIds = new Set<string>();
  let finalText = '';
  return {
    started(item) {
      if (!doneIds.has(item.id)) open.set(item.id, item);
    },
    completed(item) {
      open.delete(item.id);
      if (doneIds.has(item.id)) return;
      doneIds.add(item.id);
      done.push(item);
      const text = agentMessageText(item);
      if (text !== undefined && text !== '') finalText = text;
    },
    find: (id) => open.get(id) ?? done.find((item) => item.id === id),
    entries: () => [...done.flatMap(projectCodexItem), ...[...open.values()].flatMap(projectUnfinishedItem)],
    get toolIterations() {
      return done.filter(isToolItem).length + [...open.values()].filter(isToolItem).length;
    },
    get finalText() {
      return finalText;
    },
  };
}
