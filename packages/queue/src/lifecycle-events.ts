import type { Redis } from 'ioredis';

export const lifecycleEventTypes = [
  'session.started',
  'turn.started',
  'turn.ended',
  'turn.interrupted',
  'session.compressed',
  'session.finalized',
  'conversation.suspended',
  'conversation.resumed',
] as const;
export type LifecycleEventType = (typeof lifecycleEventTypes)[number];

/** DESIGN §10. `turn.ended` is a boundary and destroys nothing; only `session.finalized` tears down. */
export interface LifecycleEvent {
  type: LifecycleEventType;
  conversationId: number;
  sessionId?: number;
  turnId?: number;
  /** turn.ended: completed | interrupted | failed | cancelled */
  outcome?: string;
  /** session.compressed: the child; session.finalized: why. */
  childSessionId?: number;
  reason?: string;
  at: string;
}

export const eventsChannel = (prefix: string) => `${prefix}:events`;

/** Publishes to the live stream (admin WebSocket subscribers); best effort, never blocks a turn on failure. */
export async function publishLifecycleEvent(redis: Redis, prefix: string, event: Omit<LifecycleEvent, 'at'>): Promise<void> {
  await redis.publish(eventsChannel(prefix), JSON.stringify({ ...event, at: new Date().toISOString() }));
}
