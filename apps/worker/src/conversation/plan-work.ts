import { isNearLimitPart, planNextWork, readStoredCommand, type BusyInputModeName, type NextWork, type PendingInput, type Platform, type StoredCommand } from '@switchboard/core';
import type { InboundEventRow } from '@switchboard/db';
import type { DeliveryOutcome } from '../delivery/deliver-outbox.ts';

/** A pending event as the work loop plans with it: its command read once, from the stored column. */
export type PlannedInput = InboundEventRow & PendingInput & { chatCommand: StoredCommand | null };

/**
 * Reads what the row is. Ingress stored the command (or `text`), so its text
 * is not parsed again; only a row never parsed (command NULL: stored before
 * migration 0006, or by that release's gateway for plain text) is parsed, here,
 * once per read (docs/turns.md, "The stored command").
 */
export function toPlannedInput(platform: Platform, event: InboundEventRow): PlannedInput {
  const chatCommand = readStoredCommand(event.command, event.text);
  return { ...event, chatCommand, isCommand: chatCommand !== null, continues: isNearLimitPart(platform, event.text) };
}

/** The pass's next work from the pending input, oldest first (core's planNextWork on the stored commands). */
export function planWork(mode: BusyInputModeName, platform: Platform, pending: readonly InboundEventRow[], maxInputPerTurn: number): NextWork<PlannedInput> {
  return planNextWork(
    mode,
    pending.map((event) => toPlannedInput(platform, event)),
    maxInputPerTurn,
  );
}

/**
 * Steer: the input that joins the running turn at its next model call: what
 * arrived after what the turn took, up to the next command (a command runs
 * alone, after the turn) or the next message with files.
 */
export function steerableInput(pending: readonly InboundEventRow[], takenUpTo: number): InboundEventRow[] {
  const taken: InboundEventRow[] = [];
  for (const event of pending) {
    if (event.id <= takenUpTo) continue;
    if (readStoredCommand(event.command, event.text) !== null) break;
    // A file is fetched (and transcribed) before a turn's first model call, never mid-turn: it waits for the next turn.
    if (event.attachments && event.attachments.length > 0) break;
    taken.push(event);
  }
  return taken;
}

/**
 * Busy modes `queue` and `collect`: the messages waiting behind the running
 * turn, shown queued (status-reactions.ts). Commands are left out: they run
 * alone and leave no reaction, so a ⏳ on one would stay.
 */
export function waitingInput(pending: readonly InboundEventRow[], takenUpTo: number): InboundEventRow[] {
  return pending.filter((event) => event.id > takenUpTo && readStoredCommand(event.command, event.text) === null);
}

/**
 * Whether the drain may end right after delivering a turn's replies, without
 * reading the state again: the usual end of a turn, which took all the input
 * there was, delivered everything and was not stopped. Input that came since
 * is found by the look after the lease is released (docs/turns.md).
 */
export function endsAfterDelivery(pass: { work: NextWork<PendingInput>; pendingRead: number; delivery: DeliveryOutcome; stopped: boolean }): boolean {
  const { work } = pass;
  return work.kind === 'turn' && pass.delivery === 'sent' && work.events.length === pass.pendingRead && !pass.stopped;
}
