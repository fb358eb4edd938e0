import { restartLoopStartsAt, staleTurnRule } from '@switchboard/core';
import { claimDeadWorkers, cutOffRunningTurns, findStrandedConversations } from '@switchboard/db';
import { claimGoneLocalWorkers } from './local-peers.ts';
import type { WorkerContext } from '../worker-context.ts';

/**
 * The restart rules (docs/restarts.md) on every worker start and every recovery sweep: workers whose
 * heartbeat stopped (or, on this machine, whose process is gone) are declared dead and their running turns cut off (one
 * restart counted per conversation), then conversations at the threshold are
 * suspended instead of resumed. The rest resume by themselves: their input is
 * still pending and the sweep wakes them.
 */
export async function applyRestartRules(ctx: WorkerContext): Promise<void> {
  const deadWorkers = ctx.heartbeat.canJudgePeers()
    ? [...(await claimGoneLocalWorkers(ctx.db, ctx.workerId, ctx.config.HEARTBEAT_INTERVAL_MS)), ...(await claimDeadWorkers(ctx.db, { deadAfterMs: ctx.config.WORKER_DEAD_AFTER_MS, callerId: ctx.workerId }))]
    : [];
  for (const workerId of deadWorkers) {
    // A dead worker is never alive by the stale-turn rule: its running turns are cut off and counted.
    const conversations = await cutOffRunningTurns(ctx.db, { workerId }, staleTurnRule(ctx.config.WORKER_DEAD_AFTER_MS).cutOff);
    ctx.metrics.countRestartIncrements(conversations.length);
    if (conversations.length > 0) ctx.log.warn({ deadWorker: workerId, conversations }, 'worker found dead; its running turns were cut off');
    await resumeAfterDeadWorker(ctx, workerId);
  }
  // A turn a worker began while it was being declared dead (the begin raced the declaration) is seen only now.
  const late = await cutOffRunningTurns(ctx.db, { deadWorkers: true }, staleTurnRule(ctx.config.WORKER_DEAD_AFTER_MS).cutOff);
  if (late.length > 0) {
    ctx.metrics.countRestartIncrements(late.length);
    ctx.log.warn({ conversations: late }, 'a dead worker had begun turns after it was declared dead; they were cut off');
    for (const conversationId of late) await ctx.wake(conversationId, 'dead_worker').catch(() => undefined);
  }
  await suspendLoops(ctx);
}

/**
 * Conversations at RESTART_SUSPEND_THRESHOLD restarts, or as many runtime
 * crashes in a row (docs/codex.md), suspended and announced by the
 * conversation actions, the same way as an operator's suspension. Also run
 * right after a turn whose commit brought its crash streak to the threshold.
 */
export async function suspendLoops(ctx: Pick<WorkerContext, 'actions' | 'config' | 'metrics' | 'log'>): Promise<void> {
  for (const { conversationId, reason } of await ctx.actions.suspendRestartLoops(restartLoopStartsAt(ctx.config.RESTART_SUSPEND_THRESHOLD))) {
    ctx.metrics.countSuspension(reason);
    ctx.log.warn({ conversationId, reason }, reason === 'restart_loop' ? 'conversation suspended after repeated restarts' : 'conversation suspended after its runtime child died mid-turn repeatedly');
  }
}

/**
 * Its leases go back now and its conversations are woken, so they resume
 * within a sweep of the death being found rather than when the lease TTL
 * runs out (issue 19: recovery within 10 s). A conversation that was only
 * delivering, or between turns, is woken too: the wake finds nothing to do
 * or the outbox rows to send.
 *
 * So is every conversation with input waiting: the dead worker may have taken
 * a conversation's wake-up job and died before taking its lease, and BullMQ
 * hands that job back only when its lock runs out (60 s); the sweep's
 * stranded check alone took up to 8 s more (a chaos run's 13 s recovery).
 * A wake-up for a conversation already in hand returns at once.
 */
async function resumeAfterDeadWorker(ctx: WorkerContext, deadWorkerId: string): Promise<void> {
  const released = await ctx.leases.releaseAllOf(deadWorkerId);
  const waiting = (await findStrandedConversations(ctx.db, 0, 500)).map((c) => c.conversationId).filter((id) => !released.includes(id));
  for (const conversationId of [...released, ...waiting]) await ctx.wake(conversationId, 'dead_worker');
  if (released.length + waiting.length > 0) {
    ctx.log.info({ deadWorker: deadWorkerId, conversations: released, waiting: waiting.length }, 'dead worker\'s leases given back; conversations woken');
  }
}
