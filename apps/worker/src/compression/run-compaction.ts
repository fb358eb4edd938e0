import type { CompactConversationJob } from '@switchboard/queue';
import { hasPendingWork, loadConversation, recordAuditEntry } from '@switchboard/db';
import { compressConversation, type CompressionOutcome } from './compress-session.ts';
import { runConversation } from '../conversation/run-conversation.ts';
import type { WorkerContext } from '../worker-context.ts';

/** What an operator's compaction did: the job's result (BullMQ keeps it) and its audit row's detail. */
export interface CompactionJobResult {
  outcome: CompressionOutcome;
  /** False when nothing was written and no model was asked. */
  changed: boolean;
  /** The session the operator meant (absent on jobs that named none). */
  sessionId?: number;
  /** The session the compaction looked at: the current one when it ran. */
  currentSessionId?: number;
  childSessionId?: number;
  summarisedMessages?: number;
}

/**
 * What became of the job: `done` (its result, a no-op included), or `busy`
 * while another worker runs the conversation: nothing was done, and the job
 * layer (turn-worker.ts) has it retried with backoff.
 */
export type CompactionJobOutcome = { kind: 'done'; result: CompactionJobResult } | { kind: 'busy' };

/** The audit `result` of each outcome: `ok`, or a stable code saying why nothing was done. */
const auditResults: Record<CompressionOutcome, string> = {
  compressed: 'ok',
  not_needed: 'NOTHING_TO_COMPRESS',
  nothing_to_gain: 'NOTHING_TO_GAIN',
  superseded: 'SESSION_SUPERSEDED',
  locked: 'COMPRESSION_RUNNING',
  rotated: 'SESSION_SUPERSEDED',
  stale: 'SESSION_GREW',
  failed: 'SUMMARISER_FAILED',
  blocked: 'COMPRESSION_BLOCKED',
  backoff: 'COMPRESSION_BACKOFF',
  interrupted: 'INTERRUPTED',
};

/**
 * An operator's compaction (admin `POST /conversations/:id/compact`). It runs
 * under the conversation lease, like a turn, because a turn committing into
 * the old session while its tail is copied to the child would lose messages.
 * A job whose session is no longer current succeeds at once as a no-op, even
 * when the lease is taken: waiting for the lease could only end in the same
 * answer. Otherwise a taken lease is `busy`, and the job is retried until
 * the holder's turn ends.
 *
 * Not `runConversation(…, { compactFirst })`: that path cannot pass the
 * session the job names. The lease is released before the conversation's
 * input is run, through runConversation, which takes it again.
 */
export async function runCompactionJob(ctx: WorkerContext, job: CompactConversationJob, jobId: string | undefined): Promise<CompactionJobOutcome> {
  const { conversationId, sessionId } = job;
  const conversation = await loadConversation(ctx.db, conversationId);
  if (sessionId !== undefined && conversation?.currentSessionId !== sessionId) {
    const result = await finishCompaction(ctx, job, jobId, { outcome: 'superseded', changed: false, sessionId, currentSessionId: conversation?.currentSessionId ?? undefined });
    return { kind: 'done', result };
  }
  // A lost lease does not stop the compaction: its advisory lock still keeps two compressions of one conversation apart, and a turn
  // the new holder commits meanwhile makes its commit `stale` (discarded), never lost from the chain (docs/compression.md, "The commit").
  const run = await ctx.leases.runHeld(conversationId, async () => {
    const compression = await compressConversation(ctx, conversationId, { force: true, expectedSessionId: sessionId });
    return {
      outcome: compression.outcome,
      changed: compression.outcome === 'compressed',
      sessionId,
      currentSessionId: compression.oldSessionId,
      childSessionId: compression.childSessionId,
      summarisedMessages: compression.summarisedMessages,
    } satisfies CompactionJobResult;
  });
  if (run.kind === 'not_taken') return { kind: 'busy' };
  const result: CompactionJobResult = run.value;
  await finishCompaction(ctx, job, jobId, result);
  // A wake-up that came while the lease was held found it taken and left its input to the holder: run it now.
  // Its failure is not the compaction's (which is done and audited): the recovery sweep finds input left pending.
  try {
    if (!ctx.closing && (await hasPendingWork(ctx.db, conversationId))) await runConversation(ctx, conversationId);
  } catch (err) {
    ctx.log.warn({ err, conversationId, jobId }, 'input after an operator compaction not run; the recovery sweep will run it');
  }
  return { kind: 'done', result };
}

/** Logs the outcome and writes the audit row, so the operator learns what became of the request (a no-op says so). */
async function finishCompaction(ctx: WorkerContext, job: CompactConversationJob, jobId: string | undefined, result: CompactionJobResult): Promise<CompactionJobResult> {
  ctx.log.info({ conversationId: job.conversationId, jobId, ...result }, result.changed ? 'operator compaction done' : 'operator compaction: nothing done');
  await recordAuditEntry(ctx.db, {
    actor: job.requestedBy,
    action: 'conversation.compact.result',
    target: `conversation:${job.conversationId}`,
    result: auditResults[result.outcome],
    detail: { jobId: jobId ?? null, ...result },
  }).catch((err: unknown) => ctx.log.warn({ err, conversationId: job.conversationId, jobId }, 'compaction result not audited'));
  return result;
}
