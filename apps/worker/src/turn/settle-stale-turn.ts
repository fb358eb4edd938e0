import { staleTurnRule } from '@switchboard/core';
import { settleRunningTurn } from '@switchboard/db';
import type { LeaseHolding } from '../conversation/conversation-lease.ts';
import type { WorkerContext } from '../worker-context.ts';
import type { NotBegun } from './prepare-turn.ts';
import type { TurnOutcome } from './turn.ts';

type SettleDeps = Pick<WorkerContext, 'db' | 'config' | 'metrics' | 'log'>;

/** A turn whose running-turn row was refused, and the conversation and holding it was refused on. */
export interface RefusedTurn {
  conversationId: number;
  holding: LeaseHolding;
  begun: NotBegun;
}

/** The outcome of a turn whose running-turn row was refused. */
export async function outcomeOfNotBegun(deps: SettleDeps, refused: RefusedTurn): Promise<TurnOutcome> {
  const next = afterNotBegun(refused.begun);
  if (next === 'settle') return settleStaleTurn(deps, refused);
  if (next === 'recheck') deps.log.warn({ conversationId: refused.conversationId }, 'turn not started: the conversation reached the restart threshold');
  return { kind: next };
}

/** What a turn whose running-turn row was refused does next. */
export function afterNotBegun(begun: NotBegun): 'settle' | 'deferred' | 'recheck' | 'lost' {
  // Declared dead by a peer: its holdings belong to others now; the heartbeat ends the process.
  if (begun.kind === 'declared_dead') return 'lost';
  // Another running turn appeared after the state read (a worker that lost the lease wrote its row late): settle it first.
  if (begun.kind === 'occupied') return 'settle';
  // Another worker began a turn of the same user since the state read: the limit holds in the database itself.
  if (begun.kind === 'user_busy') return 'deferred';
  // The restart threshold: the restart rules suspend the conversation before it is read again.
  return 'recheck';
}

/**
 * Ends a running turn this worker found on a conversation whose lease it
 * holds: cut off and counted if its worker is dead, superseded (no restart)
 * if its worker is alive but lost the lease. Done only after confirming the
 * lease is still ours, so a worker that itself lost the lease never ends the
 * new holder's turn.
 */
export async function settleStaleTurn(deps: SettleDeps, stale: Pick<RefusedTurn, 'conversationId' | 'holding'>): Promise<TurnOutcome> {
  const { conversationId, holding } = stale;
  if (!(await holding.confirm())) return { kind: 'lost' };
  // Core's stale-turn rule decides, inside the statement: a live worker's turn is superseded, any other is cut off and counted.
  const settled = await settleRunningTurn(deps.db, conversationId, staleTurnRule(deps.config.WORKER_DEAD_AFTER_MS));
  deps.metrics.countRestartIncrements(settled.cutOff);
  deps.log.warn({ conversationId, ...settled }, 'a running turn of another worker was settled before this turn');
  return { kind: 'recheck' };
}
