import { loadPendingInbound } from '@switchboard/db';
import { deliverPendingOutbox } from './deliver-outbox.ts';
import { runTurn } from './run-turn.ts';
import type { WorkerContext } from './worker-context.ts';

/** Pending events one turn takes at most. */
const maxInputPerTurn = 32;

/**
 * Handles a wake-up: whoever gets the conversation's lease runs its turns
 * until no input is pending, delivering each turn's reply before the next
 * turn starts (replies keep their order). Another worker's wake-up for the
 * same conversation finds the lease taken and returns: the holder will see
 * that input, because it looks for pending input once more after releasing
 * the lease (closing the lost-wake-up race, see docs/turns.md).
 */
export async function runConversation(ctx: WorkerContext, conversationId: number): Promise<'ran' | 'busy'> {
  let ran = false;
  for (;;) {
    const lease = await ctx.leases.acquire(conversationId);
    if (!lease) return ran ? 'ran' : 'busy';
    ran = true;
    const renewal = setInterval(() => {
      ctx.leases.renew(lease).then(
        (held) => {
          if (held) return;
          const running = ctx.running.get(conversationId);
          if (running) {
            running.stopReason = 'lease_lost';
            running.controller.abort();
          }
        },
        (err: unknown) => ctx.log.warn({ err, conversationId }, 'lease renewal failed'),
      );
    }, Math.floor(ctx.leases.ttlMs / 3));
    try {
      await deliverPendingOutbox(ctx, conversationId);
      for (;;) {
        const input = await loadPendingInbound(ctx.db, conversationId, maxInputPerTurn);
        if (input.length === 0) break;
        await runTurn(ctx, conversationId, input);
        await deliverPendingOutbox(ctx, conversationId);
      }
    } finally {
      clearInterval(renewal);
      await ctx.leases.release(lease);
    }
    const late = await loadPendingInbound(ctx.db, conversationId, 1);
    if (late.length === 0) return 'ran';
  }
}
