import { claimDeadWorkers, cutOffRunningTurns, suspendRestartLoops } from '@switchboard/db';
import type { WorkerContext } from './worker-context.ts';

/**
 * DESIGN §9 on every worker start and every recovery sweep: workers whose
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
    if (sessionId !== null) await ctx.emit({ type: 'session.finalized', conversationId, sessionId, reason: 'suspended' });
  }
}
