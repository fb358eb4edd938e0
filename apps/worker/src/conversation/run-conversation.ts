import { setTimeout as sleep } from 'node:timers/promises';
import { isNearLimitPart, type BusyInputModeName, type NextWork, type Platform } from '@switchboard/core';
import { hasPendingWork, loadTurnState, pendingInputAges, type OutboxRow, type TurnState } from '@switchboard/db';
import { createActiveTurn, type ActiveTurn } from '../turn/active-turn.ts';
import type { ConversationHolding, LeaseHolding } from './conversation-lease.ts';
import { deliverPendingOutbox, type DeliveryDeps } from '../delivery/deliver-outbox.ts';
import { handleCommand } from './handle-command.ts';
import { endsAfterDelivery, planWork, type PlannedInput } from './plan-work.ts';
import { applyRestartRules } from '../liveness/restart-guard.ts';
import { runTurn } from '../turn/run-turn.ts';
import type { WorkerContext } from '../worker-context.ts';

/** Pending events one turn takes at most. */
const maxInputPerTurn = 32;
/** The collect debounce never holds input back longer than this many debounce windows. */
const maxDebounceWindows = 5;

/**
 * Handles a wake-up: whoever gets the conversation's lease runs its work
 * until no input is pending, delivering each reply before the next turn
 * starts (replies keep their order). Another worker's wake-up for the same
 * conversation finds the lease taken and returns: the holder will see that
 * input, because it looks for pending input once more after releasing the
 * lease (the lost-wake-up race, see docs/turns.md).
 */
export async function runConversation(ctx: WorkerContext, conversationId: number): Promise<'ran' | 'busy'> {
  let ran = false;
  for (;;) {
    const run = await runWhileHolding(ctx, conversationId);
    if (run === 'not_taken') return ran ? 'ran' : 'busy';
    ran = true;
    if (ctx.closing) return 'ran'; // shutting down: input a cut-off turn left pending is the next worker's
    if (run === 'yield') return 'ran'; // the recovery sweep comes back to it; no hot loop here
    if (!(await hasPendingWork(ctx.db, conversationId))) return 'ran';
  }
}

/**
 * The turn this lease's work loop runs now. After a lost lease one process
 * may run two loops for one conversation for a moment (the old one finishing,
 * a new one that took the lease again); each stops and forgets only its own
 * turn, never the other's entry in `ctx.running` (running-turns.ts).
 */
interface HeldTurn extends ConversationHolding {
  active?: ActiveTurn;
}

/** Rechecks in a row (a stale turn settled, the threshold reached) after which the sweep is left to come back. */
const maxRechecks = 3;

/**
 * One holding of the lease: drains the conversation while the lease is
 * renewed. Losing the lease stops the running turn as `lease_lost` (and any
 * turn this holding starts after): another worker may hold the conversation
 * now, and the fenced commit would refuse this turn anyway (issue 16, defect 2).
 */
async function runWhileHolding(ctx: WorkerContext, conversationId: number): Promise<'not_taken' | 'done' | 'yield'> {
  let held: HeldTurn | undefined;
  const run = await ctx.leases.runHeld(
    conversationId,
    async (holding) => {
      const turn: HeldTurn = holding;
      held = turn;
      try {
        return await drainConversation(ctx, conversationId, turn);
      } finally {
        if (turn.active) ctx.running.forget(turn.active);
      }
    },
    () => {
      held?.active?.dispatch({ kind: 'stop', reason: 'lease_lost' });
    },
  );
  return run.kind === 'not_taken' ? 'not_taken' : run.value;
}

/** What one drain of the conversation carries from pass to pass. */
interface DrainLoop {
  /** Rechecks in a row; at maxRechecks the sweep is left to come back. */
  rechecks: number;
  /** Kept across a wait for more input, so a /stop or an interrupt that arrives during the wait still counts. */
  waiting?: ActiveTurn;
}

/**
 * What a step of a pass leaves: rows to deliver, a reason to leave the loop
 * (`done`, or `yield` to the sweep), or a reason to read the state again.
 * The one result of every step of the loop.
 */
type PassStep = { kind: 'deliver'; outbox: OutboxRow[] } | { kind: 'exit'; result: 'done' | 'yield' } | { kind: 'again' };

/** One pass of the drain loop: what it planned, the holding, the turn it registered, and the loop it belongs to. */
interface Pass {
  plan: PassPlan;
  held: HeldTurn;
  active: ActiveTurn;
  loop: DrainLoop;
}

/**
 * 'yield': the conversation could not make progress now (rechecks in a row);
 * the sweep wakes it again. Each pass: plan the next work → run it (a command
 * or a turn) → deliver its replies, then decide whether to read again.
 */
async function drainConversation(ctx: WorkerContext, conversationId: number, held: HeldTurn): Promise<'done' | 'yield'> {
  const loop: DrainLoop = { rechecks: 0 };
  for (;;) {
    if (ctx.closing) return 'done';
    const active = registerTurn(ctx, conversationId, held, loop);
    const planned = await planPass(ctx, conversationId, held, active);
    if (planned.kind === 'exit') return planned.result;
    const pass: Pass = { plan: planned.plan, held, active, loop };
    const ran = await runWork(ctx, pass);
    if (ran.kind === 'exit') return ran.result;
    if (ran.kind === 'again') continue;
    ctx.running.forget(active);
    const next = await deliverPass(ctx, pass, ran.outbox);
    if (next.kind === 'exit') return next.result;
  }
}

/**
 * Registers the pass's turn before the input is read: a signal in between is
 * kept, not lost. The busy mode is fixed once the conversation row is read,
 * before any signal can be applied (signals are delivered on this event loop).
 */
function registerTurn(ctx: WorkerContext, conversationId: number, held: HeldTurn, loop: DrainLoop): ActiveTurn {
  const active = loop.waiting ?? createActiveTurn(conversationId, ctx.config.BUSY_INPUT_MODE, ctx.metrics);
  loop.waiting = undefined;
  held.active = active;
  if (held.lost.aborted) active.dispatch({ kind: 'stop', reason: 'lease_lost' });
  ctx.running.register(active);
  return active;
}

/** The next work of a pass, with the state it was planned from. */
interface PassPlan {
  state: TurnState;
  work: Exclude<NextWork<PlannedInput>, { kind: 'idle' }>;
  mode: BusyInputModeName;
  platform: Platform;
}

/** Reads the state (one statement), delivers older outbox rows first, and plans the next work. */
async function planPass(ctx: WorkerContext, conversationId: number, held: HeldTurn, active: ActiveTurn): Promise<Extract<PassStep, { kind: 'exit' }> | { kind: 'work'; plan: PassPlan }> {
  const state = await loadTurnState(ctx.db, conversationId, maxInputPerTurn * 2);
  if (!state) return { kind: 'exit', result: 'done' };
  // Older replies and notices go out before anything this pass produces.
  const older = state.outbox.length > 0 ? await deliverPendingOutbox(deliveryDeps(ctx, held), state.outbox) : 'sent';
  const { conversation, pending } = state;
  const mode = conversation.busyMode ?? ctx.config.BUSY_INPUT_MODE;
  active.dispatch({ kind: 'mode_known', mode });
  const platform = conversation.platform as Platform;
  const work = planWork(mode, platform, pending, maxInputPerTurn);
  // Rows another live worker is sending are not this worker's to wait for: the sweep comes back (no spin on the lease).
  if (work.kind === 'idle') return { kind: 'exit', result: older === 'elsewhere' ? 'yield' : 'done' };
  return { kind: 'work', plan: { state, work, mode, platform } };
}

/** Runs the planned command, or holds the turn back (its user is busy, more input is on its way), or runs it. */
async function runWork(ctx: WorkerContext, pass: Pass): Promise<PassStep> {
  const { plan, held, active, loop } = pass;
  const { state, work } = plan;
  if (work.kind === 'command') {
    return { kind: 'deliver', outbox: await handleCommand(ctx, { conversation: state.conversation, event: work.event, command: work.event.chatCommand, claimId: held.claimId }) };
  }
  // The user of the input the turn would take (the oldest pending).
  const user = state.pendingUser;
  if (user && state.lastTurn?.status !== 'running' && user.runningTurns >= ctx.config.USER_MAX_RUNNING_TURNS) {
    // Checked before anything starts (no model request, no row); beginTurn holds the limit exactly when this read raced.
    return { kind: 'exit', result: deferTurn(ctx, state.conversation.id, user.key) };
  }
  const last = work.events.at(-1) as PlannedInput;
  if (await waitForMoreInput(ctx, state.conversation.id, plan.mode, isNearLimitPart(plan.platform, last.text))) {
    loop.waiting = active;
    return { kind: 'again' };
  }
  active.dispatch({ kind: 'taken', upTo: last.id });
  if (user) ctx.deferred.forget(user.key, state.conversation.id);
  return runTakenTurn(ctx, pass, work.events);
}

/** Runs the turn that took the planned input, and says what its outcome means for the loop. */
async function runTakenTurn(ctx: WorkerContext, pass: Pass, input: PlannedInput[]): Promise<PassStep> {
  const { plan, held, active, loop } = pass;
  const { state } = plan;
  const user = state.pendingUser;
  const outcome = await runTurn(ctx, { state, input, active, holding: held });
  if (outcome.kind === 'deferred') return { kind: 'exit', result: deferTurn(ctx, state.conversation.id, user?.key) };
  if (outcome.kind === 'recheck') {
    // A stale turn was settled (maybe counted), or the threshold reached: suspend if due, then read again.
    await applyRestartRules(ctx);
    if (++loop.rechecks >= maxRechecks) return { kind: 'exit', result: 'yield' };
    return { kind: 'again' };
  }
  if (outcome.kind === 'lost') return { kind: 'exit', result: 'yield' }; // another holder has it, or the sweep hands it on
  if (outcome.kind === 'cut_off') return { kind: 'exit', result: 'done' };
  // A slot of this user is free again: the conversation of theirs this worker held back longest goes next.
  if (user) wakeDeferred(ctx, user.key);
  return { kind: 'deliver', outbox: outcome.outbox };
}

/** Delivers the pass's rows (before the next read, so the reply goes out now), then decides whether to read again. */
async function deliverPass(ctx: WorkerContext, pass: Pass, outbox: OutboxRow[]): Promise<Exclude<PassStep, { kind: 'deliver' }>> {
  const { plan, held, active } = pass;
  const delivery = await deliverPendingOutbox(deliveryDeps(ctx, held), outbox);
  // Another live worker sends older rows of this conversation (it lost the lease mid-delivery): it goes on in order; the sweep brings the rest.
  if (delivery === 'elsewhere') return { kind: 'exit', result: 'yield' };
  // A second state read after the usual end of a turn would only repeat the caller's look after the lease is released.
  const ends = endsAfterDelivery({ work: plan.work, pendingRead: plan.state.pending.length, delivery, stopped: active.state.stopReason !== undefined });
  return ends ? { kind: 'exit', result: 'done' } : { kind: 'again' };
}

/**
 * The user of this conversation's next input runs USER_MAX_RUNNING_TURNS
 * turns (issue 17, defect 3): the conversation is let go with its input
 * pending, untouched and in order. It is woken again when a turn of that user
 * ends on this worker, and by the recovery sweep in any case (its input is
 * pending). 'yield', so the work loop does not look again at once.
 */
function deferTurn(ctx: WorkerContext, conversationId: number, userKey: string | undefined): 'yield' {
  if (userKey) ctx.deferred.defer(userKey, conversationId);
  ctx.metrics.countTurnLimit('user_busy');
  ctx.log.debug({ conversationId, userKey }, 'conversation deferred: its user runs USER_MAX_RUNNING_TURNS turns');
  return 'yield';
}

function wakeDeferred(ctx: WorkerContext, userKey: string): void {
  const next = ctx.deferred.takeNext(userKey);
  if (next === undefined) return;
  // Not awaited: the reply goes out first. A lost wake-up costs only time: the sweep wakes the conversation too.
  ctx.wake(next, 'deferred').catch((err: unknown) => ctx.log.warn({ err, conversationId: next }, 'could not wake a deferred conversation; the sweep will'));
}

function deliveryDeps(ctx: WorkerContext, held: LeaseHolding): DeliveryDeps {
  return {
    db: ctx.db, senders: ctx.senders, log: ctx.log, metrics: ctx.metrics, claimId: held.claimId, deadAfterMs: ctx.config.WORKER_DEAD_AFTER_MS,
    mayAct: () => ctx.heartbeat.mayAct(),
  };
}

/**
 * Holds a turn back while more input is clearly on its way, then lets the
 * caller read the input again. Busy mode `collect` merges a burst once the
 * newest message is COLLECT_DEBOUNCE_MS old; in every mode, a near-limit
 * part of a long paste waits up to PASTE_MERGE_WINDOW_MS for the next part
 * (so the agent answers the whole paste once). Ages come from the database clock, so workers on other
 * machines agree. Returns true if it waited.
 */
async function waitForMoreInput(ctx: WorkerContext, conversationId: number, mode: string, lastIsPastePart: boolean): Promise<boolean> {
  const collectWindow = mode === 'collect' ? ctx.config.COLLECT_DEBOUNCE_MS : 0;
  const pasteWindow = lastIsPastePart ? ctx.config.PASTE_MERGE_WINDOW_MS : 0;
  const window = Math.max(collectWindow, pasteWindow);
  if (window === 0) return false;
  const ages = await pendingInputAges(ctx.db, conversationId);
  if (!ages || ages.newestMs >= window || ages.oldestMs >= window * maxDebounceWindows) return false;
  await sleep(window - ages.newestMs);
  return true;
}
