import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import { JobName } from './names.ts';

export const wakeConversationSchema = z.object({
  conversationId: z.number().int().positive(),
  /** The inbound event that caused the wake-up, or null for sweeps and operator actions. */
  inboundEventId: z.number().int().positive().nullable(),
  /** deferred: a turn of the user whose USER_MAX_RUNNING_TURNS held this conversation back has ended. */
  reason: z.enum(['inbound', 'sweep', 'outbox', 'operator', 'deferred', 'dead_worker']),
  /**
   * When the gateway had the event stored (ms since the epoch, with
   * microseconds, its clock): the start of the hand-off the worker measures
   * (switchboard_wake_delay_seconds). Absent on wake-ups not caused by a new event.
   */
  storedAt: z.number().positive().optional(),
});
export type WakeConversationJob = z.infer<typeof wakeConversationSchema>;

export const compactConversationSchema = z.object({
  conversationId: z.number().int().positive(),
  requestedBy: z.string().min(1),
  /**
   * The session the operator meant (current when asked). If another one is
   * current when the job runs, the job is a no-op and says so. Absent on
   * jobs queued before it existed and when the conversation had no session:
   * then whatever is current is compacted.
   */
  sessionId: z.number().int().positive().optional(),
});
export type CompactConversationJob = z.infer<typeof compactConversationSchema>;

interface JobSpec<S extends z.ZodTypeAny> {
  schema: S;
  options: JobsOptions;
}

/**
 * Job name → payload schema and retry policy. A wake-up is cheap and
 * idempotent (the handler re-reads Postgres), so retries only need to outlast
 * a short Postgres or model outage; the recovery sweep covers anything longer.
 * Finished jobs are kept by count only: an age bound as well costs every
 * completion one more range read inside BullMQ's script (issue 31), and the
 * count bounds Redis memory either way.
 */
export const jobCatalog = {
  [JobName.WakeConversation]: {
    schema: wakeConversationSchema,
    options: {
      attempts: 5,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 5000, age: 7 * 24 * 3600 },
    },
  },
  [JobName.CompactConversation]: {
    schema: compactConversationSchema,
    // Retried while another worker holds the conversation: it gets the lease once that turn ends.
    options: { attempts: 20, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } },
  },
} satisfies Record<JobName, JobSpec<z.ZodTypeAny>>;

/** One job id per inbound event, so a re-delivered event can never start a second job. */
export function jobIdForInboundEvent(inboundEventId: number): string {
  return `ev-${inboundEventId}`;
}
