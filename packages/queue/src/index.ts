export { jobCatalog, jobIdForInboundEvent, wakeConversationSchema, type WakeConversationJob } from './catalog.ts';
export { JobName, QueueName } from './names.ts';
export { createRedisConnection, type RedisRole } from './redis-connection.ts';
export { createTurnQueue, enqueueWake, type TurnQueue } from './turn-queue.ts';
