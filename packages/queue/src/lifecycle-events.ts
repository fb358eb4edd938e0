import { publishTo } from './channels.ts';
import type { RedisClient } from './redis-connection.ts';

export const lifecycleEventTypes = [
  'session.started',
  'turn.started',
  'turn.ended',
  'turn.interrupted',
  'session.compressed',
  'session.finalized',
  'session.parked',
  'conversation.suspended',
  'conversation.resumed',
] as const;
export type LifecycleEventType = (typeof lifecycleEventTypes)[number];

/**
 * Lifecycle events (docs/restarts.md). `turn.ended` is a boundary and destroys nothing; only
 * `session.finalized` tears down. A suspension parks the session instead
 * (`session.parked`): an operator's resume makes it current again, so a
 * receiver that tore down on it would lose what the resume restores.
 */
export interface LifecycleEvent {
  type: LifecycleEventType;
  conversationId: number;
  sessionId?: number;
  turnId?: number;
  /** turn.ended: completed | interrupted | failed | cancelled */
  outcome?: string;
  /** session.compressed: the child; session.finalized / session.parked: why. */
  childSessionId?: number;
  reason?: string;
  at: string;
}

export const eventsChannel = (prefix: string) => `${prefix}:events`;

/** Publishes to the live stream (admin WebSocket subscribers); best effort, never blocks a turn on failure. */
export async function publishLifecycleEvent(redis: RedisClient, prefix: string, event: Omit<LifecycleEvent, 'at'>): Promise<void> {
  await publishTo(redis, eventsChannel(prefix), JSON.stringify({ ...event, at: new Date().toISOString() }));
}
