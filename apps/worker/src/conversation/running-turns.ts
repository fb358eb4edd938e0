import type { Logger } from '@switchboard/logger';
import { subscribeSignals, type ConversationSignal, type RedisClient } from '@switchboard/queue';
import type { ActiveTurn } from '../turn/active-turn.ts';

/**
 * The turn (or the turn being prepared) of each conversation this process
 * holds the lease of, and the one door to it: the lease holder's loop
 * registers and forgets its turn, the gateway's signals reach it here, and a
 * stopping worker stops them all here (docs/turns.md, "Interrupts").
 */
export interface RunningTurns {
  /** Makes `active` its conversation's turn; registered before the input is read, so a signal in between is kept. */
  register(active: ActiveTurn): void;
  /**
   * Forgets `active` if it is still its conversation's turn. After a lost lease
   * one process may run two loops for one conversation for a moment; each
   * forgets only its own turn, never the newer one.
   */
  forget(active: ActiveTurn): void;
  /** Whether `active` is still its conversation's turn (not ended, not replaced by the next one). */
  holds(active: ActiveTurn): boolean;
  /** Hands a signal to its conversation's turn; the turn that took it, or undefined when none runs here. */
  dispatch(signal: ConversationSignal): ActiveTurn | undefined;
  /** Stops every turn still running (the drain window closed on shutdown). */
  stopAll(reason: 'shutdown'): void;
  /** How many turns run here now (/healthz, the running-turns gauge). */
  size(): number;
}

export function createRunningTurns(): RunningTurns {
  const turns = new Map<number, ActiveTurn>();
  return {
    register: (active) => void turns.set(active.conversationId, active),
    forget: (active) => {
      if (turns.get(active.conversationId) === active) turns.delete(active.conversationId);
    },
    holds: (active) => turns.get(active.conversationId) === active,
    dispatch: (signal) => {
      const active = turns.get(signal.conversationId);
      active?.dispatch({ kind: 'signal', signal });
      return active;
    },
    stopAll: (reason) => {
      for (const active of turns.values()) active.dispatch({ kind: 'stop', reason });
    },
    size: () => turns.size,
  };
}

export interface SignalListening {
  /** A connection used for nothing but subscriptions (a subscribed connection can do nothing else). */
  subscriber: RedisClient;
  prefix: string;
  turns: RunningTurns;
  /** A new message reached a turn running here (busy modes queue and collect show it waiting). */
  onInput(active: ActiveTurn): void;
  log: Logger;
}

/** Subscribes to the gateway's conversation signals and hands each to the turn it is for; resolves once subscribed. */
export async function listenForSignals({ subscriber, prefix, turns, onInput, log }: SignalListening): Promise<void> {
  await subscribeSignals(
    subscriber,
    prefix,
    (signal) => {
      const active = turns.dispatch(signal);
      if (active && signal.kind === 'input') onInput(active);
    },
    () => log.warn('ignored a malformed conversation signal'),
  );
}
