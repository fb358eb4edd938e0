export { conversations } from './conversations.ts';
export { inboundEvents } from './inbound-events.ts';
export { messages, type StoredToolCall } from './messages.ts';
export { outbox } from './outbox.ts';
export { sessions } from './sessions.ts';
export { turns, turnStatuses, type TurnStatus } from './turns.ts';
export { auditLog } from './audit-log.ts';
export { eventDeliveries, lifecycleEvents } from './lifecycle-events.ts';
export { workers } from './workers.ts';
