import { claimDeadWorkers, cutOffRunningTurns, loadSession, suspendRestartLoops } from '@switchboard/db';
import type { LifecycleEventType } from '@switchboard/queue';
import type { WorkerContext } from './worker-context.ts';

/**
 * The restart rules (docs/restarts.md) on every worker start and every recovery sweep: workers whose
 * heartbeat stopped are declared dead and their running turns cut off (one
 * restart counted per conversation), then conversations at the threshold are
 * suspended instead of resumed. The rest resume by themselves: their input is
 * still pending and the sweep wakes them.
 */
export async function applyRestartRules(ctx: WorkerContext): Promise<void> {
  for (const workerId of await claimDeadWorkers(ctx.db, ctx.config.WORKER_DEAD_AFTER_MS)) {
    const conversations = await cutOffRunningTurns(ctx.db, { workerId });
    ctx.metrics.countRestartIncrements(conversations.length);
    if (conversations.length > 0) ctx.log.warn({ deadWorker: workerId, conversations }, 'worker found dead; its running turns were cut off');
  }
  for (const { conversationId, sessionId } of await suspendRestartLoops(ctx.db, ctx.config.RESTART_SUSPEND_THRESHOLD)) {
    ctx.metrics.countSuspension('restart_loop');
    ctx.log.warn({ conversationId }, 'conversation suspended after repeated restarts');
    await ctx.emit({ type: 'conversation.suspended', conversationId, sessionId: sessionId ?? undefined, reason: 'restart_loop' });
    if (sessionId !== null) await ctx.emit({ type: await sessionEndEvent(ctx, sessionId), conversationId, sessionId, reason: 'restart_loop' });
  }
}

/**
 * A first suspension parks the session (its row stays active, an operator's
 * resume restores it): `session.parked`. A fresh session that loops again
 * while the conversation is already suspended is finalized by the suspension
 * and can never come back: that one really ended.
 */
async function sessionEndEvent(ctx: WorkerContext, sessionId: number): Promise<LifecycleEventType> {
  const session = await loadSession(ctx.db, sessionId);
  return session?.status === 'finalized' ? 'session.finalized' : 'session.parked';
}
