import type { TranscriptEntry } from '@switchboard/agent';
import type { ConversationRow, InboundEventRow, OutboxRow, TurnState } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { LeaseHolding } from '../conversation/conversation-lease.ts';
import type { ActiveTurn } from './active-turn.ts';
import type { PreparedTurn } from './prepare-turn.ts';
import type { StreamResult } from './reply-stream.ts';
import type { ResolvedInput } from './resolve-media.ts';
import type { TurnReactions } from './status-reactions.ts';

/**
 * The carrier of one turn (issue 32): what the lease holder's loop hands
 * over, grown once into a `Turn` when the turn starts, then into an
 * `ExecutingTurn` once its files are read and its request prepared. Each step
 * of run-turn.ts is a function of (the dependencies it uses, the turn) that
 * returns a value; nothing about a turn is threaded by hand from step to step.
 */

/** What the lease holder's loop hands a turn: the state it read the input with, the input, its registered turn, its holding. */
export interface TakenTurn {
  state: TurnState;
  /** Pending inbound events, oldest first. */
  input: InboundEventRow[];
  /** Registered before the input was read, so a signal in between is kept (running-turns.ts). */
  active: ActiveTurn;
  /** Whether the lease is still ours, and the claim the reply parts are committed under. */
  holding: LeaseHolding;
}

/** One started turn: its conversation, its reactions (STATUS_REACTIONS) and its log. */
export interface Turn extends TakenTurn {
  conversation: ConversationRow;
  reactions: TurnReactions;
  /** Bound to the conversation. */
  log: Logger;
}

/** A turn whose files are read and whose model request is prepared: what execution and the commit read. */
export interface ExecutingTurn extends Turn {
  /** The input once its files are read (`media.events` is what the transcript keeps). */
  media: ResolvedInput;
  prepared: PreparedTurn;
}

/** What the runtime produced, or the notice that stands for it. */
export interface ExecutedTurn {
  entries: TranscriptEntry[];
  status: 'completed' | 'interrupted' | 'failed' | 'cancelled';
  replyText: string | null;
  error?: string;
  /** The runtime's thread (Codex), kept on the session by the commit for the next turn. */
  runtimeThreadId?: string;
  /** The thread received this turn's input: the commit advances `sessions.runtime_synced_seq`. */
  runtimeSynced?: boolean;
  /** The model that answered (or last failed): `turns.model` (docs/turns.md "Model fallbacks"). */
  model?: string;
  /** The growing message this turn streamed into (STREAMING), if it posted or took one over. */
  stream?: StreamResult;
}

/** How a turn ended, for the loop that drains the conversation: the one outcome every step of a turn returns. */
export type TurnOutcome =
  /** Committed: these outbox rows wait to be delivered. */
  | { kind: 'committed'; outbox: OutboxRow[] }
  /** Stopped by shutdown: left running, so the restart is counted and the next holder resumes it (docs/restarts.md). */
  | { kind: 'cut_off' }
  /** This worker lost the conversation (lease lost, or the fenced commit refused): it sends nothing more for it. */
  | { kind: 'lost' }
  /** A stale running turn was settled or the restart threshold reached: apply the restart rules and read again. */
  | { kind: 'recheck' }
  /** Its input's user already runs USER_MAX_RUNNING_TURNS turns: nothing was written, the input stays pending for later. */
  | { kind: 'deferred' };
