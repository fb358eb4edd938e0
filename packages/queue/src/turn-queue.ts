import { Queue } from 'bullmq';
import { jobCatalog, jobIdForInboundEvent, type CompactConversationJob, type WakeConversationJob } from './catalog.ts';
import { JobName, QueueName } from './names.ts';
import { bullPrefix, type RedisClient } from './redis-connection.ts';

export type TurnQueue = Queue<WakeConversationJob | CompactConversationJob, unknown, JobName>;

export function createTurnQueue(connection: RedisClient, prefix: string): TurnQueue {
  return new Queue(QueueName.Turns, { connection, prefix: bullPrefix(prefix, connection) });
}

/** Adds a wake-up; adding the same inbound event twice is a no-op (fixed job id). */
export async function enqueueWake(queue: TurnQueue, job: WakeConversationJob, jobId?: string): Promise<void> {
  const payload = jobCatalog[JobName.WakeConversation].schema.parse(job);
  const id = jobId ?? (payload.inboundEventId !== null ? jobIdForInboundEvent(payload.inboundEventId) : undefined);
  await queue.add(JobName.WakeConversation, payload, { ...jobCatalog[JobName.WakeConversation].options, jobId: id });
}

/** Operator compaction (admin API): one job per request; the worker holding the conversation runs it. */
export async function enqueueCompaction(queue: TurnQueue, job: CompactConversationJob): Promise<string | undefined> {
  const payload = jobCatalog[JobName.CompactConversation].schema.parse(job);
  const added = await queue.add(JobName.CompactConversation, payload, jobCatalog[JobName.CompactConversation].options);
  return added.id;
}
