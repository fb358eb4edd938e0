import type { RedisClient } from '@switchboard/queue';
import type { FastifyRequest } from 'fastify';
import type { GatewayConfig } from '@switchboard/config';
import { createConversationActions, createLifecycleEmitter, type ConversationActions } from '@switchboard/actions';
import { recordAuditEntry, type Database, type DbExecutor } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { ScheduleQueue, TurnQueue } from '@switchboard/queue';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { AdminToken } from './admin-tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The name of the admin token that authenticated the request ('' before authentication). */
    adminActor: string;
  }
}

/** What the gateway hands the admin API (register-admin.ts). */
export interface AdminDeps {
  config: GatewayConfig;
  db: Database;
  queue: TurnQueue;
  /** The `schedules` queue, on the same connection: operators' schedules are armed and disarmed through it. */
  schedules: ScheduleQueue;
  /** The gateway's fail-fast connection: signals and lifecycle events are published on it. */
  redis: RedisClient;
  log: Logger;
  metrics: GatewayMetrics;
}

/** What the admin routes work with, built once per gateway. */
export interface AdminContext extends AdminDeps {
  tokens: readonly AdminToken[];
  /** Reset, suspend, resume, delete, busy mode, runtime, stop and compact: the same actions the chat commands reach. */
  actions: ConversationActions;
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
 * The conversation actions (packages/actions) as the admin door uses them.
 * Lifecycle events are best effort here: a Redis or Postgres hiccup must
 * not undo or fail an action that is already committed. With
 * EVENT_WEBHOOK_URLS set each event is also recorded for the workers'
 * webhook deliverer, one after the other, in the documented order.
 */
export function createAdminActions(deps: { config: GatewayConfig; db: Database; queue: TurnQueue; redis: RedisClient; log: Logger }): ConversationActions {
  const emit = createLifecycleEmitter({ db: deps.db, redis: deps.redis, prefix: deps.config.REDIS_PREFIX, webhookUrls: deps.config.EVENT_WEBHOOK_URLS, log: deps.log });
  return createConversationActions({
    db: deps.db,
    emit: (event) =>
      emit(event).catch((err: unknown) => deps.log.warn({ err, type: event.type, conversationId: event.conversationId }, 'lifecycle event not recorded or published')),
    log: deps.log,
    reach: { redis: deps.redis, prefix: deps.config.REDIS_PREFIX, queue: deps.queue },
    fullAccessAllowed: deps.config.CODEX_ALLOW_FULL_ACCESS,
  });
}
