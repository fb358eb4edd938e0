import type { Redis } from 'ioredis';
import type { FastifyRequest } from 'fastify';
import type { GatewayConfig } from '@switchboard/config';
import { recordAuditEntry, recordLifecycleEvent, type Database, type DbExecutor } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { publishLifecycleEvent, type LifecycleEvent, type TurnQueue } from '@switchboard/queue';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { AdminToken } from './admin-tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The name of the admin token that authenticated the request ('' before authentication). */
    adminActor: string;
  }
}

/** What the admin routes work with, built once per gateway. */
export interface AdminContext {
  config: GatewayConfig;
  db: Database;
  queue: TurnQueue;
  /** The gateway's fail-fast connection: signals and lifecycle events are published on it. */
  redis: Redis;
  log: Logger;
  metrics: GatewayMetrics;
  tokens: readonly AdminToken[];
}

export interface AuditedAction {
  action: string;
  target: string;
  /** `ok`, or the error code the request is answered with. */
  result: string;
  detail?: Record<string, unknown>;
}

/** Writes the audit row of an action, inside the action's own transaction when given one. */
export async function auditAction(ctx: AdminContext, executor: DbExecutor, request: FastifyRequest, action: AuditedAction): Promise<void> {
  await recordAuditEntry(executor, { ...action, actor: request.adminActor, clientAddress: request.ip });
  ctx.metrics.countAdminAction(action.action, action.result);
}

/**
 * Best effort, like the workers' events: a Redis or Postgres hiccup must not
 * undo an action that is already committed. With EVENT_WEBHOOK_URLS set the
 * event is also recorded for the workers' webhook deliverer.
 */
export function emitLifecycleEvent(ctx: AdminContext, event: Omit<LifecycleEvent, 'at'>): void {
  const urls = ctx.config.EVENT_WEBHOOK_URLS;
  const recorded =
    urls.length > 0
      ? recordLifecycleEvent(ctx.db, { conversationId: event.conversationId, type: event.type, payload: { ...event, at: new Date().toISOString() } }, urls)
      : Promise.resolve(0);
  recorded
    .then(() => publishLifecycleEvent(ctx.redis, ctx.config.REDIS_PREFIX, event))
    .catch((err: unknown) => ctx.log.warn({ err, type: event.type, conversationId: event.conversationId }, 'lifecycle event not recorded or published'));
}
