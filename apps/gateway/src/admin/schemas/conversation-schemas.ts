import { Type, type Static } from '@fastify/type-provider-typebox';
import { agentRuntimeNames, permissionProfiles, streamingSettings } from '@switchboard/core';
import type { ConversationDetail, ConversationSummary, SessionSummary, TranscriptMessage } from '@switchboard/db';
import { ApprovalView } from './approval-schemas.ts';
import { busyModes, conversationStatuses, NextCursor, NullableInteger, NullableString, NullableTimestamp, PageQuery, platforms, RowId, Timestamp, toIso } from './common-schemas.ts';

export const BusyMode = Type.Enum([...busyModes]);
export const RuntimeName = Type.Enum([...agentRuntimeNames]);
export const PermissionProfileName = Type.Enum([...permissionProfiles]);

/** PUT /admin/conversations/{id}/runtime: what to change; a field left out stays, null means the default. */
export const RuntimeSettingBody = Type.Object(
  {
    runtime: Type.Optional(Type.Union([RuntimeName, Type.Null()], { description: 'openai or codex; null: the global AGENT_RUNTIME' })),
    permissionProfile: Type.Optional(
      Type.Union([PermissionProfileName, Type.Null()], {
        description: 'The Codex sandbox and approval profile; null: read-only. full-access is refused (403 FULL_ACCESS_DISABLED) unless CODEX_ALLOW_FULL_ACCESS is on',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** PUT /admin/conversations/{id}/streaming. */
export const StreamingSettingBody = Type.Object(
  {
    streaming: Type.Union([Type.Enum([...streamingSettings]), Type.Null()], {
      description: 'on: a slow answer is posted early and grows in place; off: one message once done; null: the global STREAMING',
    }),
  },
  { additionalProperties: false },
);

/** PUT /admin/conversations/{id}/model. A model name as the endpoint knows it: no spaces, at most 200 characters. */
export const ModelSettingBody = Type.Object(
  {
    model: Type.Union([Type.String({ minLength: 1, maxLength: 200, pattern: '^\\S+$' }), Type.Null()], {
      description: "The model the conversation's turns ask first: MODEL_NAME or a model of MODEL_FALLBACKS; null: the configured order",
    }),
    fallback: Type.Optional(Type.Boolean({ description: 'Whether a failing chosen model moves on to the other configured models (default false: that model only)' })),
  },
  { additionalProperties: false },
);

export const ConversationListQuery = Type.Object(
  {
    platform: Type.Optional(Type.Enum([...platforms])),
    status: Type.Optional(Type.Enum([...conversationStatuses])),
    busy: Type.Optional(Type.Boolean({ description: 'true: a turn is running now; false: none is' })),
    busyMode: Type.Optional(BusyMode),
    updatedSince: Type.Optional(Type.String({ format: 'date-time' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const ConversationView = Type.Object({
  id: Type.Integer(),
  key: Type.String({ description: 'platform:account:chat:thread:userScope' }),
  platform: Type.String(),
  accountId: Type.String(),
  chatId: Type.String(),
  threadId: Type.String(),
  userScope: Type.String(),
  status: Type.Enum([...conversationStatuses]),
  suspendReason: NullableString,
  suspendedAt: NullableTimestamp,
  busyMode: Type.Union([BusyMode, Type.Null()], { description: 'null: the global BUSY_INPUT_MODE' }),
  restartCount: Type.Integer(),
  runtime: Type.Union([RuntimeName, Type.Null()], { description: 'null: the global AGENT_RUNTIME' }),
  permissionProfile: Type.Union([PermissionProfileName, Type.Null()], { description: 'Codex sandbox and approval profile; null: read-only' }),
  streaming: Type.Union([Type.Enum([...streamingSettings]), Type.Null()], { description: 'Streaming replies; null: the global STREAMING' }),
  model: Type.Union([Type.String(), Type.Null()], { description: "The model an operator chose; null: MODEL_NAME, then MODEL_FALLBACKS in order" }),
  modelFallback: Type.Boolean({ description: 'Whether the chosen model may fall back to the other configured models' }),
  runtimeCrashStreak: Type.Integer({ description: 'Runtime children that died mid-turn in a row; suspended at RESTART_SUSPEND_THRESHOLD' }),
  currentSessionId: NullableInteger,
  preSuspendSessionId: NullableInteger,
  lastCompressedAt: NullableTimestamp,
  runningTurnId: NullableInteger,
  queuedInput: Type.Integer({ description: 'Inbound events no turn has taken yet' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ConversationViewT = Static<typeof ConversationView>;

export const ConversationList = Type.Object({ items: Type.Array(ConversationView), nextCursor: NextCursor });

export const SessionView = Type.Object({
  id: Type.Integer(),
  parentSessionId: NullableInteger,
  status: Type.String(),
  endReason: NullableString,
  messageCount: Type.Integer(),
  tokenEstimate: Type.Integer(),
  createdAt: Timestamp,
  endedAt: NullableTimestamp,
});

export const ConversationDetailView = Type.Object({
  conversation: ConversationView,
  defaultBusyMode: Type.String({ description: "The gateway's BUSY_INPUT_MODE, used when busyMode is null" }),
  defaultRuntime: Type.String({ description: "The gateway's AGENT_RUNTIME, used when runtime is null (set it alike on gateways and workers)" }),
  fullAccessAllowed: Type.Boolean({ description: "The gateway's CODEX_ALLOW_FULL_ACCESS: whether full-access may be set; a stored full-access runs read-only while it is off" }),
  chain: Type.Array(SessionView, { description: 'The session chain, root first, head (current or pre-suspension) last' }),
  runningTurn: Type.Union([
    Type.Object({ id: Type.Integer(), sessionId: Type.Integer(), workerId: NullableString, startedAt: Timestamp }),
    Type.Null(),
  ]),
});

export const TranscriptQuery = Type.Object(
  {
    session: Type.Optional(RowId({ description: 'Walk the chain from this session instead of the head' })),
    order: Type.Optional(Type.Enum(['asc', 'desc'], { default: 'asc' })),
    // A session id below 2^53 and a seq (int4) below 2^31: longer numbers failed the query with a 500.
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}:[0-9]{1,9}$', description: 'nextCursor of the previous page (sessionId:seq)' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  },
  { additionalProperties: false },
);

export const TranscriptView = Type.Object({
  conversationId: Type.Integer(),
  messages: Type.Array(
    Type.Object({
      id: Type.Integer(),
      sessionId: Type.Integer(),
      seq: Type.Integer(),
      role: Type.Enum(['user', 'assistant', 'tool']),
      kind: Type.Enum(['message', 'summary']),
      content: Type.String(),
      toolCalls: Type.Union([Type.Array(Type.Object({ id: Type.String(), name: Type.String(), arguments: Type.String() })), Type.Null()]),
      toolCallId: NullableString,
      toolName: NullableString,
      turnId: NullableInteger,
      createdAt: Timestamp,
    }),
  ),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  /** The questions asked of the chat user during the turns on this page, oldest first. */
  approvals: Type.Array(ApprovalView),
});

export function viewConversation(row: ConversationSummary): ConversationViewT {
  return {
    id: row.id,
    key: row.key,
    platform: row.platform,
    accountId: row.accountId,
    chatId: row.chatId,
    threadId: row.threadId,
    userScope: row.userScope,
    status: row.status,
    suspendReason: row.suspendReason,
    suspendedAt: toIso(row.suspendedAt),
    busyMode: row.busyMode,
    restartCount: row.restartCount,
    runtime: row.runtime,
    permissionProfile: row.permissionProfile,
    streaming: row.streaming,
    model: row.model,
    modelFallback: row.modelFallback,
    runtimeCrashStreak: row.runtimeCrashStreak,
    currentSessionId: row.currentSessionId,
    preSuspendSessionId: row.preSuspendSessionId,
    lastCompressedAt: toIso(row.lastCompressedAt),
    runningTurnId: row.runningTurnId,
    queuedInput: row.queuedInput,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  };
}

/** The gateway's defaults a conversation's detail is read against. */
export interface ConversationDefaults {
  busyMode: string;
  runtime: string;
  fullAccessAllowed: boolean;
}

export function viewDetail(detail: ConversationDetail, defaults: ConversationDefaults): Static<typeof ConversationDetailView> {
  return {
    conversation: viewConversation(detail.conversation),
    defaultBusyMode: defaults.busyMode,
    defaultRuntime: defaults.runtime,
    fullAccessAllowed: defaults.fullAccessAllowed,
    chain: detail.chain.map((s: SessionSummary) => ({ ...s, createdAt: toIso(s.createdAt), endedAt: toIso(s.endedAt) })),
    runningTurn: detail.runningTurn ? { ...detail.runningTurn, startedAt: toIso(detail.runningTurn.startedAt) } : null,
  };
}

export function viewMessage(message: TranscriptMessage): Static<typeof TranscriptView>['messages'][number] {
  return { ...message, createdAt: toIso(message.createdAt) };
}
