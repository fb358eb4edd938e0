export { compactConversationSchema, jobCatalog, jobIdForInboundEvent, wakeConversationSchema, type CompactConversationJob, type WakeConversationJob } from './catalog.ts';
export { JobName, QueueName } from './names.ts';
export { bullPrefix, createRedisConnection, isCluster, redisCredentialsOf, redisReachOf, type RedisClient, type RedisReach, type RedisReachSettings, type RedisRole } from './redis-connection.ts';
export { listenTo, onChannelMessage, publishTo, subscribeTo, unsubscribeFrom } from './channels.ts';
export { createTurnQueue, enqueueCompaction, enqueueWake, type TurnQueue } from './turn-queue.ts';
export { conversationSignalSchema, publishSignal, signalChannel, subscribeSignals, type ConversationSignal } from './conversation-signals.ts';
export { approvalSignalChannel, approvalSignalSchema, publishApprovalSignal, subscribeApprovalSignals, type ApprovalSignal } from './approval-signals.ts';
export { eventsChannel, lifecycleEventTypes, publishLifecycleEvent, type LifecycleEvent, type LifecycleEventType } from './lifecycle-events.ts';
export { conversationLeaseKey, createRedisLease, deriveTokenId, discordGatewayLeaseKey, releaseLeasesOfHolder, telegramPollerLeaseKey, type RedisLease } from './redis-lease.ts';
export { runAsLeader, type RunAsLeaderOptions } from './run-as-leader.ts';
export { runWhileLeased, type LeasedRun, type LeaseHold, type LeaseLoss, type RunWhileLeasedOptions } from './run-while-leased.ts';
export { preciseNow } from './precise-clock.ts';
export {
  armSchedule,
  createScheduleQueue,
  disarmSchedule,
  occurrenceJobName,
  occurrenceJobSchema,
  occurrenceTimeOf,
  scheduleQueueName,
  type ArmableSchedule,
  type OccurrenceJob,
  type ScheduleQueue,
} from './schedule-queue.ts';
