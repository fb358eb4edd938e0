export const busyInputModes = ['interrupt', 'queue', 'collect', 'steer'] as const;
export type BusyInputModeName = (typeof busyInputModes)[number];

export interface PendingInput {
  id: number;
  text: string;
  /** True when the text is a chat command (handled alone, never given to the model). */
  isCommand: boolean;
  /** True when the message is a near-limit part of a long paste, so the next part belongs with it. */
  continues?: boolean;
}

export type NextWork<T extends PendingInput> = { kind: 'command'; event: T } | { kind: 'turn'; events: T[] } | { kind: 'idle' };

/**
 * Decides what the conversation does next with its pending input, oldest
 * first (docs/turns.md, "Busy input modes"). A command at the head runs alone. `queue` runs one
 * message per turn. `interrupt`, `collect` and `steer` take every message up
 * to the next command: under `interrupt` each later one would have stopped
 * the earlier turn anyway, `collect` merges them by definition, and `steer`
 * would have added them to the running turn.
 */
export function planNextWork<T extends PendingInput>(mode: BusyInputModeName, pending: T[], maxPerTurn: number): NextWork<T> {
  const [first] = pending;
  if (!first) return { kind: 'idle' };
  if (first.isCommand) return { kind: 'command', event: first };
  if (mode === 'queue') {
    // One message per turn, but the parts of one long paste are one message.
    const events: T[] = [first];
    for (let i = 1; i < pending.length && events.at(-1)?.continues && events.length < maxPerTurn; i++) {
      const next = pending[i] as T;
      if (next.isCommand) break;
      events.push(next);
    }
    return { kind: 'turn', events };
  }
  const events: T[] = [];
  for (const event of pending) {
    if (event.isCommand || events.length >= maxPerTurn) break;
    events.push(event);
  }
  return { kind: 'turn', events };
}

/** Whether a new message should stop the running turn (docs/turns.md, "Busy input modes"). */
export function shouldInterrupt(mode: BusyInputModeName, signal: 'input' | 'stop'): boolean {
  return signal === 'stop' || mode === 'interrupt';
}

/**
 * Whether a message that arrives while a turn runs waits for a later turn
 * (shown queued): `queue` and `collect`. Under `interrupt` it stops the turn
 * and is taken at once; under `steer` it joins the running turn.
 */
export function waitsWhileBusy(mode: BusyInputModeName): boolean {
  return mode === 'queue' || mode === 'collect';
}
