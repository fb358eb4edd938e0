import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { listSchedules, loadConversationSummary } from '@switchboard/db';
import { disarmSchedule } from '@switchboard/queue';
import { modelSettingOf } from '@switchboard/actions';
import { auditAction, type AdminContext } from '../admin-context.ts';
import { AdminError } from '../admin-errors.ts';
import { errors, IdParams } from '../schemas/common-schemas.ts';
import { BusyMode, ModelSettingBody, RuntimeSettingBody, StreamingSettingBody } from '../schemas/conversation-schemas.ts';
import { notFound } from './conversation-routes.ts';
import { audited, conversationTarget, failAudited, registerConversationAction, tags } from './register-conversation-action.ts';

/**
 * What operators do to a conversation: the admin door to the conversation
 * actions (packages/actions), the same actions chat commands reach. Each
 * action and its audit row commit in one transaction (or neither does); an
 * action that moves the session supersedes a running turn in that
 * transaction, fenced like a commit; lifecycle events and signals go out
 * after the commit, so no one hears of a change that did not happen. The
 * routes here only parse, call and answer (registerConversationAction).
 */
export function registerConversationActionRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  registerSessionRoutes(scope, ctx);
  registerRequestRoutes(scope, ctx);
  registerBusyModeRoute(scope, ctx);
  registerDeleteRoute(scope, ctx);
  registerSettingRoutes(scope, ctx);
}

const found = (outcome: { kind: string }, id: number) => (outcome.kind === 'not_found' ? notFound(id) : undefined);

/** Suspend, resume and reset: the actions that move the session. */
function registerSessionRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  registerConversationAction(scope, ctx, {
    method: 'POST',
    path: 'suspend',
    action: 'suspend',
    summary: 'Suspend: park the session chain; the next message starts a fresh session until resumed',
    body: Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'operator' })) }, { additionalProperties: false }),
    refusals: [400, 404, 409],
    audit: 'conversation.suspend',
    act: ({ actions, id, input, door }) => actions.suspend(id, input.reason ?? 'operator', door),
    refuse: (r, id) =>
      r.kind === 'already_suspended' ? new AdminError('ALREADY_SUSPENDED', `conversation ${id} is already suspended (${r.reason ?? 'no reason'})`) : found(r, id),
    detail: (r, input) => {
      const reason = input.reason ?? 'operator';
      return r.kind === 'suspended' ? { reason, preSuspendSessionId: r.preSuspendSessionId, restartCount: r.restartCount } : { reason };
    },
  });
  registerConversationAction(scope, ctx, {
    method: 'POST',
    path: 'resume',
    action: 'resume',
    summary: 'Resume: restore the pre-suspension session (a session started meanwhile is finalized) and release input a restart loop held back',
    refusals: [404, 409],
    audit: 'conversation.resume',
    act: ({ actions, id, door }) => actions.resume(id, door),
    refuse: (r, id) => (r.kind === 'not_suspended' ? new AdminError('NOT_SUSPENDED', `conversation ${id} is not suspended`) : found(r, id)),
    detail: (r) => (r.kind === 'resumed' ? { restoredSessionId: r.restoredSessionId, finalizedSessionId: r.finalizedSessionId, releasedInput: r.releasedInput } : {}),
  });
  registerConversationAction(scope, ctx, {
    method: 'POST',
    path: 'reset',
    action: 'reset',
    summary: 'Reset: finalize the current session and start a fresh one (restart counter cleared)',
    refusals: [404],
    audit: 'conversation.reset',
    act: ({ actions, id, door }) => actions.reset(id, 'operator', door),
    refuse: found,
    detail: (r) => (r.kind === 'reset' ? { oldSessionId: r.oldSessionId, newSessionId: r.newSessionId } : {}),
  });
}

/** Compact and interrupt: requests the worker holding the conversation carries out. */
function registerRequestRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  registerCompactRoute(scope, ctx);
  registerInterruptRoute(scope, ctx);
}

function registerCompactRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().post(
    '/conversations/:id/compact',
    {
      schema: {
        tags,
        summary:
          'Compact now, through the one compression path (a job the worker holding the conversation runs); 202. The job is meant for the session current now: if another is current when it runs, or too little is new to summarise, it does nothing and says so in its result and the audit log (`conversation.compact.result`)',
        params: IdParams,
        response: {
          202: Type.Object({
            ok: Type.Literal(true),
            jobId: Type.Union([Type.String(), Type.Null()]),
            sessionId: Type.Union([Type.Integer(), Type.Null()], { description: 'The session the compaction is meant for (null: none yet, whatever is current then)' }),
          }),
          ...errors(404, 503),
        },
      },
    },
    async (request, reply) => {
      const id = request.params.id;
      const on = { action: 'conversation.compact', id };
      const conversation = await loadConversationSummary(ctx.db, id);
      if (!conversation) return failAudited(ctx, request, on, notFound(id));
      const sessionId = conversation.currentSessionId;
      const queued = await ctx.actions.requestCompaction(id, sessionId, request.adminActor);
      if (queued.kind === 'unavailable') {
        return failAudited(ctx, request, on, new AdminError('REDIS_UNAVAILABLE', 'the compaction job could not be queued', { cause: queued.cause }));
      }
      const jobId = queued.value;
      await auditAction(ctx, ctx.db, request, { action: on.action, target: conversationTarget(id), result: 'ok', detail: { jobId, sessionId } });
      return reply.code(202).send({ ok: true as const, jobId: jobId ?? null, sessionId });
    },
  );
}

function registerInterruptRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().post(
    '/conversations/:id/interrupt',
    {
      schema: {
        tags,
        summary: 'Stop the running turn (the worker running it stops at its next safe point; outcome cancelled)',
        params: IdParams,
        response: { 200: Type.Object({ ok: Type.Literal(true), running: Type.Boolean({ description: 'Whether a turn was running when asked' }) }), ...errors(404, 503) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const on = { action: 'conversation.interrupt', id };
      const conversation = await loadConversationSummary(ctx.db, id);
      if (!conversation) return failAudited(ctx, request, on, notFound(id));
      const stopped = await ctx.actions.requestStop(id);
      if (stopped.kind === 'unavailable') {
        return failAudited(ctx, request, on, new AdminError('REDIS_UNAVAILABLE', 'the stop signal could not be published', { cause: stopped.cause }));
      }
      const running = conversation.runningTurnId !== null;
      await auditAction(ctx, ctx.db, request, { action: on.action, target: conversationTarget(id), result: 'ok', detail: { runningTurnId: conversation.runningTurnId } });
      return { ok: true as const, running };
    },
  );
}

/** Delete: answered with what was deleted, not the conversation (there is none left). */
function registerDeleteRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().delete(
    '/conversations/:id',
    {
      schema: {
        tags,
        summary: 'Delete: stop it, finalize it and remove its transcript, inbound events, turns and outbox',
        params: IdParams,
        querystring: Type.Object({ confirm: Type.String({ minLength: 1, description: "The conversation's key, to confirm" }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ ok: Type.Literal(true), deleted: Type.Object({ id: Type.Integer(), key: Type.String() }) }), ...errors(400, 404) },
      },
    },
    async (request) => {
      const id = request.params.id;
      // Its schedules go with it (the rows cascade); read first, so their BullMQ entries are taken out now, not at their next time.
      const schedules = await listSchedules(ctx.db, { conversationId: id, activeOnly: true });
      const result = await ctx.actions.remove(
        id,
        request.query.confirm,
        audited(ctx, request, { action: 'conversation.delete', id }, (r) => ({
          code: r.kind === 'not_found' ? 'CONVERSATION_NOT_FOUND' : r.kind === 'confirmation_mismatch' ? 'CONFIRMATION_MISMATCH' : null,
          detail: r.kind === 'deleted' ? { key: r.key, finalizedSessionId: r.finalizedSessionId } : {},
        })),
      );
      if (result.kind === 'not_found') throw notFound(id);
      if (result.kind === 'confirmation_mismatch') {
        throw new AdminError('CONFIRMATION_MISMATCH', "confirm must be the conversation's key", { field: 'confirm' });
      }
      await Promise.all(
        schedules.map((schedule) =>
          disarmSchedule(ctx.schedules, schedule.id).catch((err: unknown) => request.log.warn({ err, scheduleId: schedule.id }, 'schedule of a deleted conversation not disarmed; its next time finds it gone')),
        ),
      );
      return { ok: true as const, deleted: { id, key: result.key } };
    },
  );
}

function registerBusyModeRoute(scope: FastifyInstance, ctx: AdminContext): void {
  registerConversationAction(scope, ctx, {
    method: 'PUT',
    path: 'busy-mode',
    action: 'setBusyMode',
    summary: 'Set the busy input mode (null: back to the global BUSY_INPUT_MODE)',
    body: Type.Object({ mode: Type.Union([BusyMode, Type.Null()]) }, { additionalProperties: false }),
    refusals: [400, 404],
    audit: 'conversation.busy_mode',
    act: ({ actions, id, input, door }) => actions.setBusyMode(id, input.mode, door),
    refuse: found,
    detail: (_r, input) => ({ mode: input.mode }),
  });
}

/** The settings the next turn reads: runtime and Codex permission profile (docs/codex.md), streaming and model (docs/turns.md). */
function registerSettingRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  registerConversationAction(scope, ctx, {
    method: 'PUT',
    path: 'runtime',
    action: 'setRuntime',
    summary:
      "Set the conversation's runtime (openai, codex; null: the global AGENT_RUNTIME) and/or its Codex permission profile (read-only, workspace-write, full-access, full-access-unattended; null: read-only). A field left out stays. The next turn uses it. full-access and full-access-unattended (no sandbox; the latter also asks nothing): 403 FULL_ACCESS_DISABLED unless CODEX_ALLOW_FULL_ACCESS is on",
    body: RuntimeSettingBody,
    refusals: [400, 403, 404],
    audit: 'conversation.runtime',
    act: ({ actions, id, input, door }) => actions.setRuntime(id, input, door),
    refuse: (r, id) =>
      r.kind === 'full_access_disabled'
        ? new AdminError('FULL_ACCESS_DISABLED', 'the full-access profile is off on this gateway (CODEX_ALLOW_FULL_ACCESS)', { field: 'permissionProfile' })
        : found(r, id),
    detail: (_r, input) => ({ ...input }),
  });
  registerConversationAction(scope, ctx, {
    method: 'PUT',
    path: 'streaming',
    action: 'setStreaming',
    summary: "Set whether the conversation's slow answers stream (on, off; null: the global STREAMING). The next turn uses it",
    body: StreamingSettingBody,
    refusals: [400, 404],
    audit: 'conversation.streaming',
    act: ({ actions, id, input, door }) => actions.setStreaming(id, input.streaming, door),
    refuse: found,
    detail: (_r, input) => ({ streaming: input.streaming }),
  });
  registerConversationAction(scope, ctx, {
    method: 'PUT',
    path: 'model',
    action: 'setModel',
    summary:
      "Choose the model the conversation's turns ask (MODEL_NAME or a model of MODEL_FALLBACKS; null: the configured order). fallback (default false): whether a failing chosen model moves on to the other configured models. The next OpenAI turn uses it; the Codex runtime ignores it",
    body: ModelSettingBody,
    refusals: [400, 404],
    audit: 'conversation.model',
    act: ({ actions, id, input, door }) => actions.setModel(id, input, door),
    refuse: found,
    detail: (_r, input) => {
      const stored = modelSettingOf(input);
      return { model: stored.model, fallback: stored.modelFallback };
    },
  });
}
