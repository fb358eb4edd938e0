import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  asDatabase,
  deleteConversation,
  loadConversationSummary,
  releaseHeldInput,
  resetConversationSession,
  resumeConversation,
  setBusyMode,
  suspendConversation,
  type DbExecutor,
  type ResumeResult,
} from '@switchboard/db';
import { enqueueCompaction, enqueueWake, publishSignal } from '@switchboard/queue';
import { auditAction, emitLifecycleEvent, type AdminContext } from '../admin-context.ts';
import { AdminError, type AdminErrorCode } from '../admin-errors.ts';
import { errors, IdParams } from '../schemas/common-schemas.ts';
import { BusyMode, ConversationView, viewConversation } from '../schemas/conversation-schemas.ts';
import { notFound } from './conversation-routes.ts';

const ActionResult = Type.Object({ ok: Type.Literal(true), conversation: ConversationView });

/**
 * What operators do to a conversation. Each action and its audit row commit
 * in one transaction (or neither does); lifecycle events and signals go out
 * after the commit, so no one hears of a change that did not happen.
 */
export function registerConversationActionRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['actions'];

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
      const result = await inTransaction(ctx, request, 'conversation.suspend', id, async (tx) => {
        const r = await suspendConversation(tx, id, reason);
        const code = r.kind === 'not_found' ? 'CONVERSATION_NOT_FOUND' : r.kind === 'already_suspended' ? 'ALREADY_SUSPENDED' : null;
        return { value: r, code, detail: r.kind === 'suspended' ? { reason, preSuspendSessionId: r.preSuspendSessionId, restartCount: r.restartCount } : { reason } };
      });
      if (result.kind === 'not_found') throw notFound(id);
      if (result.kind === 'already_suspended') throw new AdminError('ALREADY_SUSPENDED', `conversation ${id} is already suspended (${result.reason ?? 'no reason'})`);
      emitLifecycleEvent(ctx, { type: 'conversation.suspended', conversationId: id, sessionId: result.preSuspendSessionId ?? undefined, reason });
      // Parked, not finalized: a resume makes it current again (docs/restarts.md, "Lifecycle events").
      if (result.preSuspendSessionId !== null) emitLifecycleEvent(ctx, { type: 'session.parked', conversationId: id, sessionId: result.preSuspendSessionId, reason });
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
      const result = await inTransaction<ResumeResult & { releasedInput: number }>(ctx, request, 'conversation.resume', id, async (tx) => {
        const r = await resumeConversation(tx, id);
        if (r.kind !== 'resumed') return { value: { ...r, releasedInput: 0 }, code: r.kind === 'not_found' ? 'CONVERSATION_NOT_FOUND' : 'NOT_SUSPENDED', detail: {} };
        // A restart-loop suspension held the cut-off turn's input back; resuming runs it again, in order.
        const releasedInput = await releaseHeldInput(asDatabase(tx), id);
        return { value: { ...r, releasedInput }, code: null, detail: { restoredSessionId: r.restoredSessionId, finalizedSessionId: r.finalizedSessionId, releasedInput } };
      });
      if (result.kind === 'not_found') throw notFound(id);
      if (result.kind === 'not_suspended') throw new AdminError('NOT_SUSPENDED', `conversation ${id} is not suspended`);
      if (result.finalizedSessionId !== null) {
        emitLifecycleEvent(ctx, { type: 'session.finalized', conversationId: id, sessionId: result.finalizedSessionId, reason: 'resumed' });
      }
      emitLifecycleEvent(ctx, { type: 'conversation.resumed', conversationId: id, sessionId: result.restoredSessionId ?? undefined });
      if (result.releasedInput > 0) {
        // If this wake-up is lost, the recovery sweep finds the released input anyway.
        await enqueueWake(ctx.queue, { conversationId: id, inboundEventId: null, reason: 'operator' }, `resume-${id}-${Date.now()}`).catch((err: unknown) =>
          ctx.log.warn({ err, conversationId: id }, 'wake-up after resume not queued; the recovery sweep will run the input'),
        );
      }
      return { ok: true as const, conversation: await reload(ctx, id) };
    },
  );

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
      const result = await inTransaction(ctx, request, 'conversation.reset', id, async (tx) => {
        if (!(await loadConversationSummary(tx, id))) return { value: null, code: 'CONVERSATION_NOT_FOUND', detail: {} };
        const r = await resetConversationSession(asDatabase(tx), id, 'operator');
        return { value: r, code: null, detail: { ...r } };
      });
      if (!result) throw notFound(id);
      if (result.oldSessionId !== null) emitLifecycleEvent(ctx, { type: 'session.finalized', conversationId: id, sessionId: result.oldSessionId, reason: 'operator' });
      emitLifecycleEvent(ctx, { type: 'session.started', conversationId: id, sessionId: result.newSessionId });
      return { ok: true as const, conversation: await reload(ctx, id) };
    },
  );

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
      // Named in the job, so that requests for one session coalesce: the first compacts it, the rest find it superseded.
      const sessionId = conversation.currentSessionId;
      let jobId: string | undefined;
      try {
        jobId = await enqueueCompaction(ctx.queue, { conversationId: id, requestedBy: request.adminActor, ...(sessionId !== null ? { sessionId } : {}) });
      } catch (error) {
        return failAudited(ctx, request, 'conversation.compact', id, new AdminError('REDIS_UNAVAILABLE', 'the compaction job could not be queued', { cause: error }));
      }
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
      try {
        // inboundEventId 0: an operator stop, which stops whatever runs (docs/turns.md).
        await publishSignal(ctx.redis, ctx.config.REDIS_PREFIX, { kind: 'stop', conversationId: id, inboundEventId: 0, storedAt: Date.now() });
      } catch (error) {
        return failAudited(ctx, request, 'conversation.interrupt', id, new AdminError('REDIS_UNAVAILABLE', 'the stop signal could not be published', { cause: error }));
      }
      const running = conversation.runningTurnId !== null;
      await auditAction(ctx, ctx.db, request, { action: 'conversation.interrupt', target: target(id), result: 'ok', detail: { runningTurnId: conversation.runningTurnId } });
      return { ok: true as const, running };
    },
  );

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
      const changed = await inTransaction(ctx, request, 'conversation.busy_mode', id, async (tx) => {
        const ok = await setBusyMode(asDatabase(tx), id, mode);
        return { value: ok, code: ok ? null : 'CONVERSATION_NOT_FOUND', detail: { mode } };
      });
      if (!changed) throw notFound(id);
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
      const result = await inTransaction(ctx, request, 'conversation.delete', id, async (tx) => {
        const r = await deleteConversation(tx, id, request.query.confirm);
        const code = r.kind === 'not_found' ? 'CONVERSATION_NOT_FOUND' : r.kind === 'confirmation_mismatch' ? 'CONFIRMATION_MISMATCH' : null;
        return { value: r, code, detail: r.kind === 'deleted' ? { key: r.key, finalizedSessionId: r.finalizedSessionId } : {} };
      });
      if (result.kind === 'not_found') throw notFound(id);
      if (result.kind === 'confirmation_mismatch') {
        throw new AdminError('CONFIRMATION_MISMATCH', "confirm must be the conversation's key", { field: 'confirm' });
      }
      // A turn still running has nothing left to commit to; stop it rather than let it fail at commit.
      publishSignal(ctx.redis, ctx.config.REDIS_PREFIX, { kind: 'stop', conversationId: id, inboundEventId: 0, storedAt: Date.now() }).catch((err: unknown) =>
        ctx.log.warn({ err, conversationId: id }, 'stop signal for a deleted conversation not published'),
      );
      if (result.finalizedSessionId !== null) emitLifecycleEvent(ctx, { type: 'session.finalized', conversationId: id, sessionId: result.finalizedSessionId, reason: 'deleted' });
      return { ok: true as const, deleted: { id, key: result.key } };
    },
  );
}

interface Step<T> {
  value: T;
  /** null when the action happened; else the code the request is refused with. */
  code: AdminErrorCode | null;
  detail: Record<string, unknown>;
}

/** Runs an action and writes its audit row in the same transaction. */
async function inTransaction<T>(ctx: AdminContext, request: FastifyRequest, action: string, id: number, run: (tx: DbExecutor) => Promise<Step<T>>): Promise<T> {
  return ctx.db.transaction(async (tx) => {
    const step = await run(tx);
    await auditAction(ctx, tx, request, { action, target: target(id), result: step.code ?? 'ok', detail: step.detail });
    return step.value;
  });
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
