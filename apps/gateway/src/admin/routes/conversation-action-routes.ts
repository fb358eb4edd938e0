import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Door } from '@switchboard/actions';
import { loadConversationSummary, setConversationModel, setConversationStreaming } from '@switchboard/db';
import { auditAction, type AdminContext } from '../admin-context.ts';
import { AdminError, type AdminErrorCode } from '../admin-errors.ts';
import { errors, IdParams } from '../schemas/common-schemas.ts';
import { BusyMode, ConversationView, ModelSettingBody, RuntimeSettingBody, StreamingSettingBody, viewConversation } from '../schemas/conversation-schemas.ts';
import { notFound } from './conversation-routes.ts';

const ActionResult = Type.Object({ ok: Type.Literal(true), conversation: ConversationView });

/**
 * What operators do to a conversation: the admin door to the conversation
 * actions (packages/actions), the same actions chat commands reach. Each
 * action and its audit row commit in one transaction (or neither does); an
 * action that moves the session supersedes a running turn in that
 * transaction, fenced like a commit; lifecycle events and signals go out
 * after the commit, so no one hears of a change that did not happen.
 */
export function registerConversationActionRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  registerSuspensionRoutes(app, ctx);
  registerResetRoute(app, ctx);
  registerRequestRoutes(app, ctx);
  registerSettingRoutes(app, ctx);
  registerRuntimeRoute(app, ctx);
  registerStreamingRoute(app, ctx);
  registerModelRoute(app, ctx);
}

type Routes = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;
const tags = ['actions'];

/** Suspend and resume. */
function registerSuspensionRoutes(app: Routes, ctx: AdminContext): void {
  app.post(
    '/conversations/:id/suspend',
    {
      schema: {
        tags,
        summary: 'Suspend: park the session chain; the next message starts a fresh session until resumed',
        params: IdParams,
        body: Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'operator' })) }, { additionalProperties: false }),
        response: { 200: ActionResult, ...errors(400, 404, 409) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const reason = request.body.reason ?? 'operator';
      const result = await ctx.actions.suspend(
        id,
        reason,
        audited(ctx, request, 'conversation.suspend', id, (r) => ({
          code: r.kind === 'not_found' ? 'CONVERSATION_NOT_FOUND' : r.kind === 'already_suspended' ? 'ALREADY_SUSPENDED' : null,
          detail: r.kind === 'suspended' ? { reason, preSuspendSessionId: r.preSuspendSessionId, restartCount: r.restartCount } : { reason },
        })),
      );
      if (result.kind === 'not_found') throw notFound(id);
      if (result.kind === 'already_suspended') throw new AdminError('ALREADY_SUSPENDED', `conversation ${id} is already suspended (${result.reason ?? 'no reason'})`);
      return { ok: true as const, conversation: await reload(ctx, id) };
    },
  );

  app.post(
    '/conversations/:id/resume',
    {
      schema: {
        tags,
        summary: 'Resume: restore the pre-suspension session (a session started meanwhile is finalized) and release input a restart loop held back',
        params: IdParams,
        response: { 200: ActionResult, ...errors(404, 409) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const result = await ctx.actions.resume(
        id,
        audited(ctx, request, 'conversation.resume', id, (r) =>
          r.kind === 'resumed'
            ? { code: null, detail: { restoredSessionId: r.restoredSessionId, finalizedSessionId: r.finalizedSessionId, releasedInput: r.releasedInput } }
            : { code: r.kind === 'not_found' ? 'CONVERSATION_NOT_FOUND' : 'NOT_SUSPENDED', detail: {} },
        ),
      );
      if (result.kind === 'not_found') throw notFound(id);
      if (result.kind === 'not_suspended') throw new AdminError('NOT_SUSPENDED', `conversation ${id} is not suspended`);
      return { ok: true as const, conversation: await reload(ctx, id) };
    },
  );
}

/** Reset. */
function registerResetRoute(app: Routes, ctx: AdminContext): void {
  app.post(
    '/conversations/:id/reset',
    {
      schema: {
        tags,
        summary: 'Reset: finalize the current session and start a fresh one (restart counter cleared)',
        params: IdParams,
        response: { 200: ActionResult, ...errors(404) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const result = await ctx.actions.reset(
        id,
        'operator',
        audited(ctx, request, 'conversation.reset', id, (r) =>
          r.kind === 'reset' ? { code: null, detail: { oldSessionId: r.oldSessionId, newSessionId: r.newSessionId } } : { code: 'CONVERSATION_NOT_FOUND', detail: {} },
        ),
      );
      if (result.kind === 'not_found') throw notFound(id);
      return { ok: true as const, conversation: await reload(ctx, id) };
    },
  );
}

/** Compact and interrupt: requests the worker holding the conversation carries out. */
function registerRequestRoutes(app: Routes, ctx: AdminContext): void {
  app.post(
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
      const conversation = await loadConversationSummary(ctx.db, id);
      if (!conversation) return failAudited(ctx, request, 'conversation.compact', id, notFound(id));
      const sessionId = conversation.currentSessionId;
      const queued = await ctx.actions.requestCompaction(id, sessionId, request.adminActor);
      if (queued.kind === 'unavailable') {
        return failAudited(ctx, request, 'conversation.compact', id, new AdminError('REDIS_UNAVAILABLE', 'the compaction job could not be queued', { cause: queued.cause }));
      }
      const jobId = queued.value;
      await auditAction(ctx, ctx.db, request, { action: 'conversation.compact', target: target(id), result: 'ok', detail: { jobId, sessionId } });
      return reply.code(202).send({ ok: true as const, jobId: jobId ?? null, sessionId });
    },
  );

  app.post(
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
      const conversation = await loadConversationSummary(ctx.db, id);
      if (!conversation) return failAudited(ctx, request, 'conversation.interrupt', id, notFound(id));
      const stopped = await ctx.actions.requestStop(id);
      if (stopped.kind === 'unavailable') {
        return failAudited(ctx, request, 'conversation.interrupt', id, new AdminError('REDIS_UNAVAILABLE', 'the stop signal could not be published', { cause: stopped.cause }));
      }
      const running = conversation.runningTurnId !== null;
      await auditAction(ctx, ctx.db, request, { action: 'conversation.interrupt', target: target(id), result: 'ok', detail: { runningTurnId: conversation.runningTurnId } });
      return { ok: true as const, running };
    },
  );
}

/** Busy mode and delete. */
function registerSettingRoutes(app: Routes, ctx: AdminContext): void {
  app.put(
    '/conversations/:id/busy-mode',
    {
      schema: {
        tags,
        summary: 'Set the busy input mode (null: back to the global BUSY_INPUT_MODE)',
        params: IdParams,
        body: Type.Object({ mode: Type.Union([BusyMode, Type.Null()]) }, { additionalProperties: false }),
        response: { 200: ActionResult, ...errors(400, 404) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const mode = request.body.mode;
      const result = await ctx.actions.setBusyMode(
        id,
        mode,
        audited(ctx, request, 'conversation.busy_mode', id, (r) => ({ code: r.kind === 'set' ? null : 'CONVERSATION_NOT_FOUND', detail: { mode } })),
      );
      if (result.kind === 'not_found') throw notFound(id);
      return { ok: true as const, conversation: await reload(ctx, id) };
    },
  );

  app.delete(
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
      const result = await ctx.actions.remove(
        id,
        request.query.confirm,
        audited(ctx, request, 'conversation.delete', id, (r) => ({
          code: r.kind === 'not_found' ? 'CONVERSATION_NOT_FOUND' : r.kind === 'confirmation_mismatch' ? 'CONFIRMATION_MISMATCH' : null,
          detail: r.kind === 'deleted' ? { key: r.key, finalizedSessionId: r.finalizedSessionId } : {},
        })),
      );
      if (result.kind === 'not_found') throw notFound(id);
      if (result.kind === 'confirmation_mismatch') {
        throw new AdminError('CONFIRMATION_MISMATCH', "confirm must be the conversation's key", { field: 'confirm' });
      }
      return { ok: true as const, deleted: { id, key: result.key } };
    },
  );
}

/** The runtime and the Codex permission profile (docs/codex.md). */
function registerRuntimeRoute(app: Routes, ctx: AdminContext): void {
  app.put(
    '/conversations/:id/runtime',
    {
      schema: {
        tags,
        summary:
          "Set the conversation's runtime (openai, codex; null: the global AGENT_RUNTIME) and/or its Codex permission profile (read-only, workspace-write, full-access, full-access-unattended; null: read-only). A field left out stays. The next turn uses it. full-access and full-access-unattended (no sandbox; the latter also asks nothing): 403 FULL_ACCESS_DISABLED unless CODEX_ALLOW_FULL_ACCESS is on",
        params: IdParams,
        body: RuntimeSettingBody,
        response: { 200: ActionResult, ...errors(400, 403, 404) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const change = request.body;
      const result = await ctx.actions.setRuntime(
        id,
        change,
        audited(ctx, request, 'conversation.runtime', id, (r) => ({
          code: r.kind === 'set' ? null : r.kind === 'not_found' ? 'CONVERSATION_NOT_FOUND' : 'FULL_ACCESS_DISABLED',
          detail: { ...change },
        })),
      );
      if (result.kind === 'not_found') throw notFound(id);
      if (result.kind === 'full_access_disabled') {
        throw new AdminError('FULL_ACCESS_DISABLED', 'the full-access profile is off on this gateway (CODEX_ALLOW_FULL_ACCESS)', { field: 'permissionProfile' });
      }
      return { ok: true as const, conversation: await reload(ctx, id) };
    },
  );
}

/** Streaming replies per conversation (docs/turns.md "Streaming replies"): a setting, no action on a running turn. */
function registerStreamingRoute(app: Routes, ctx: AdminContext): void {
  app.put(
    '/conversations/:id/streaming',
    {
      schema: {
        tags,
        summary: "Set whether the conversation's slow answers stream (on, off; null: the global STREAMING). The next turn uses it",
        params: IdParams,
        body: StreamingSettingBody,
        response: { 200: ActionResult, ...errors(400, 404) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const { streaming } = request.body;
      // The setting and its audit row in one transaction, as the runtime's.
      const set = await ctx.db.transaction(async (tx) => {
        const row = await setConversationStreaming(tx, id, streaming);
        await auditAction(ctx, tx, request, { action: 'conversation.streaming', target: target(id), result: row ? 'ok' : 'CONVERSATION_NOT_FOUND', detail: { streaming } });
        return row;
      });
      if (!set) throw notFound(id);
      return { ok: true as const, conversation: await reload(ctx, id) };
    },
  );
}

/**
 * The model a conversation's turns ask first (docs/turns.md "Model fallbacks"):
 * a setting read by the worker at each turn. The gateway does not know the
 * workers' MODEL_FALLBACKS (their keys live with the workers), so a name no
 * worker serves is stored, and its turns fail with MODEL_NOT_CONFIGURED.
 */
function registerModelRoute(app: Routes, ctx: AdminContext): void {
  app.put(
    '/conversations/:id/model',
    {
      schema: {
        tags,
        summary:
          "Choose the model the conversation's turns ask (MODEL_NAME or a model of MODEL_FALLBACKS; null: the configured order). fallback (default false): whether a failing chosen model moves on to the other configured models. The next OpenAI turn uses it; the Codex runtime ignores it",
        params: IdParams,
        body: ModelSettingBody,
        response: { 200: ActionResult, ...errors(400, 404) },
      },
    },
    async (request) => {
      const id = request.params.id;
      // Cleared: no fallback flag is kept for a model that is not chosen.
      const setting = { model: request.body.model, modelFallback: request.body.model === null ? false : (request.body.fallback ?? false) };
      const set = await ctx.db.transaction(async (tx) => {
        const row = await setConversationModel(tx, id, setting);
        const detail = { model: setting.model, fallback: setting.modelFallback };
        await auditAction(ctx, tx, request, { action: 'conversation.model', target: target(id), result: row ? 'ok' : 'CONVERSATION_NOT_FOUND', detail });
        return row;
      });
      if (!set) throw notFound(id);
      return { ok: true as const, conversation: await reload(ctx, id) };
    },
  );
}

interface Audit {
  /** null when the action happened; else the code the request is refused with. */
  code: AdminErrorCode | null;
  detail: Record<string, unknown>;
}

/** The operator's door to an action: its audit row is written in the action's own transaction, with the turn it superseded, if any. */
function audited<T>(ctx: AdminContext, request: FastifyRequest, action: string, id: number, describe: (outcome: T) => Audit): Door<T> {
  return {
    kind: 'operator',
    record: async (tx, outcome, supersededTurnIds) => {
      const { code, detail } = describe(outcome);
      const withTurns = supersededTurnIds.length > 0 ? { ...detail, supersededTurnIds } : detail;
      await auditAction(ctx, tx, request, { action, target: target(id), result: code ?? 'ok', detail: withTurns });
    },
  };
}

/** Records a refused action, then refuses it. */
async function failAudited(ctx: AdminContext, request: FastifyRequest, action: string, id: number, error: AdminError): Promise<never> {
  await auditAction(ctx, ctx.db, request, { action, target: target(id), result: error.code });
  throw error;
}

async function reload(ctx: AdminContext, id: number) {
  const row = await loadConversationSummary(ctx.db, id);
  if (!row) throw notFound(id);
  return viewConversation(row);
}

function target(id: number): string {
  return `conversation:${id}`;
}
