import { Type, type Static } from '@fastify/type-provider-typebox';
import type { AuditEntry, OutboxEntry, TurnSummary } from '@switchboard/db';
import { ConversationView } from './conversation-schemas.ts';
import { NextCursor, NullableInteger, NullableString, NullableTimestamp, PageQuery, RowId, Timestamp, toIso } from './common-schemas.ts';

const turnStatuses = ['queued', 'running', 'completed', 'interrupted', 'failed', 'cancelled'];

export const TurnListQuery = Type.Object(
  {
    status: Type.Optional(Type.Enum(turnStatuses)),
    conversation: Type.Optional(RowId()),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const TurnView = Type.Object({
  id: Type.Integer(),
  conversationId: Type.Integer(),
  sessionId: Type.Integer(),
  status: Type.String({ description: 'running, or the outcome: completed | interrupted | failed | cancelled' }),
  workerId: NullableString,
  error: NullableString,
  model: Type.Union([Type.String(), Type.Null()], { description: 'The model that answered (or last failed); MODEL_FALLBACKS may make it another than MODEL_NAME. Null for runtimes without one and older turns' }),
  startedAt: Timestamp,
  endedAt: NullableTimestamp,
  cutOffAt: NullableTimestamp,
  durationMs: Type.Number({ description: 'Ended: its length; running: how long so far' }),
});
export const TurnList = Type.Object({ items: Type.Array(TurnView), nextCursor: NextCursor });

export function viewTurn(turn: TurnSummary): Static<typeof TurnView> {
  return {
    id: turn.id,
    conversationId: turn.conversationId,
    sessionId: turn.sessionId,
    status: turn.status,
    workerId: turn.workerId,
    error: turn.error,
    model: turn.model,
    startedAt: toIso(turn.startedAt),
    endedAt: toIso(turn.endedAt),
    cutOffAt: toIso(turn.cutOffAt),
    durationMs: Math.round(turn.durationMs),
  };
}

export const QueueCounts = Type.Object({
  name: Type.String(),
  waiting: Type.Integer(),
  active: Type.Integer(),
  delayed: Type.Integer(),
  failed: Type.Integer(),
  prioritized: Type.Integer(),
  paused: Type.Integer(),
  completed: Type.Integer(),
});
export const QueueFigures = Type.Object({ queues: Type.Array(QueueCounts) });

// Redis takes 64-bit range indexes; one past 2^63 was refused and answered as if Redis were down (503).
export const FailedJobsQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })), offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })) },
  { additionalProperties: false },
);
export const FailedJob = Type.Object({
  id: Type.String(),
  name: Type.String(),
  data: Type.Unknown(),
  failedReason: Type.String(),
  attemptsMade: Type.Integer(),
  stacktrace: Type.Array(Type.String()),
  createdAt: NullableTimestamp,
  finishedAt: NullableTimestamp,
});
export const FailedJobList = Type.Object({ queue: Type.String(), items: Type.Array(FailedJob) });
export const JobParams = Type.Object({ queue: Type.String({ minLength: 1 }), jobId: Type.String({ minLength: 1, maxLength: 200 }) });
export const QueueParams = Type.Object({ queue: Type.String({ minLength: 1 }) });

export const OutboxListQuery = Type.Object(
  {
    status: Type.Optional(Type.Enum(['undelivered', 'pending', 'failed'], { default: 'undelivered' })),
    conversation: Type.Optional(RowId()),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export const OutboxView = Type.Object({
  id: Type.Integer(),
  conversationId: Type.Integer(),
  turnId: NullableInteger,
  platform: Type.String(),
  chunkIndex: Type.Integer(),
  text: Type.String(),
  status: Type.String(),
  attempts: Type.Integer(),
  lastError: NullableString,
  nextAttemptAt: Timestamp,
  createdAt: Timestamp,
  sentAt: NullableTimestamp,
});
export const OutboxList = Type.Object({ items: Type.Array(OutboxView), nextCursor: NextCursor });

export function viewOutbox(row: OutboxEntry): Static<typeof OutboxView> {
  return {
    id: row.id,
    conversationId: row.conversationId,
    turnId: row.turnId,
    platform: row.platform,
    chunkIndex: row.chunkIndex,
    text: row.text,
    status: row.status,
    attempts: row.attempts,
    lastError: row.lastError,
    nextAttemptAt: toIso(row.nextAttemptAt),
    createdAt: toIso(row.createdAt),
    sentAt: toIso(row.sentAt),
  };
}

export const AuditListQuery = Type.Object(
  {
    actor: Type.Optional(Type.String({ minLength: 1 })),
    action: Type.Optional(Type.String({ minLength: 1 })),
    target: Type.Optional(Type.String({ minLength: 1 })),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export const AuditView = Type.Object({
  id: Type.Integer(),
  actor: Type.String(),
  action: Type.String(),
  target: Type.String(),
  result: Type.String({ description: 'ok, or the error code the request was answered with' }),
  detail: Type.Unknown({ description: 'What the action was given and what it changed' }),
  clientAddress: NullableString,
  createdAt: Timestamp,
});
export const AuditList = Type.Object({ items: Type.Array(AuditView), nextCursor: NextCursor });

export function viewAudit(row: AuditEntry): Static<typeof AuditView> {
  return { ...row, createdAt: toIso(row.createdAt) };
}

export const RestartsView = Type.Object({
  counters: Type.Array(ConversationView, { description: 'Conversations with a restart counter above zero, highest first' }),
  suspended: Type.Array(ConversationView, { description: 'Suspended conversations, most recent first' }),
});
