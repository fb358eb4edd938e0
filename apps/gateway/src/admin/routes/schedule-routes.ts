import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { endSchedule, makeSchedule, type ScheduleDeps, type ScheduleOutcome } from '@switchboard/actions';
import { listSchedules } from '@switchboard/db';
import { auditAction, type AdminContext } from '../admin-context.ts';
import { AdminError } from '../admin-errors.ts';
import { errors, IdParams } from '../schemas/common-schemas.ts';
import { ScheduleBody, ScheduleList, ScheduleListQuery, ScheduleResult, viewSchedule } from '../schemas/schedule-schemas.ts';
import { notFound } from './conversation-routes.ts';
import { conversationTarget } from './register-conversation-action.ts';

const tags = ['schedules'];

/**
 * Operators' schedules (docs/admin.md, "Schedules"): the admin door to
 * packages/actions' makeSchedule and endSchedule, the door the `schedule`
 * tool and `/schedules` in chat use too. An operator's schedule is made by
 * `admin:<token name>` and counts against no USER_MAX_SCHEDULES. Creating and
 * cancelling are audited, refusals included; the row is written once the
 * schedule is stored or cancelled (the action offers no transaction to share).
 */
export function registerScheduleRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  registerListRoute(scope, ctx);
  registerCreateRoute(scope, ctx);
  registerCancelRoute(scope, ctx);
}

function scheduleDeps(ctx: AdminContext): ScheduleDeps {
  return { db: ctx.db, schedules: ctx.schedules, log: ctx.log };
}

function registerListRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/schedules',
    {
      schema: {
        tags,
        summary: 'Schedules of every status (active, ended, cancelled), newest first; `conversationId` keeps one conversation\'s',
        querystring: ScheduleListQuery,
        response: { 200: ScheduleList, ...errors(400) },
      },
    },
    async (request) => {
      const { conversationId, limit } = request.query;
      const rows = await listSchedules(ctx.db, { ...(conversationId !== undefined ? { conversationId } : {}), activeOnly: false, limit: limit ?? 100 });
      return { items: rows.map(viewSchedule) };
    },
  );
}

function registerCreateRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().post(
    '/schedules',
    {
      schema: {
        tags,
        summary:
          'Schedule a turn in a conversation: once (`at`) or by `cron` in `timeZone`; 201 with the schedule, armed in BullMQ. A time, cron or time zone that cannot run: 400 SCHEDULE_INVALID; no such conversation: 404 CONVERSATION_NOT_FOUND; Redis down: 503 REDIS_UNAVAILABLE (the schedule is cancelled, not left unarmed). Nothing stays active when refused',
        body: ScheduleBody,
        response: { 201: ScheduleResult, ...errors(400, 404, 503) },
      },
    },
    async (request, reply) => {
      const { conversationId, ...spec } = request.body;
      const deps = scheduleDeps(ctx);
      const audit = (result: string, detail: Record<string, unknown> = {}) =>
        auditAction(ctx, ctx.db, request, { action: 'schedule.create', target: conversationTarget(conversationId), result, detail: { ...whatWasAsked(spec), ...detail } });
      const outcome = await makeSchedule(deps, { conversationId, spec, createdBy: `admin:${request.adminActor}`, maxActive: null });
      const refusal = refusalOf(outcome, conversationId);
      if (refusal) {
        await audit(refusal.code);
        throw refusal;
      }
      const { schedule, armed } = outcome as Extract<ScheduleOutcome, { schedule: unknown }>;
      if (!armed) {
        // Stored but not in BullMQ, it would wait for the next worker start: cancelled instead, so the answer (retry) is the whole truth.
        await endSchedule(deps, { id: schedule.id });
        await audit('REDIS_UNAVAILABLE', { scheduleId: schedule.id });
        throw new AdminError('REDIS_UNAVAILABLE', 'the schedule could not be armed (Redis did not answer); nothing is scheduled, try again');
      }
      await audit('ok', { scheduleId: schedule.id });
      return reply.code(201).send({ ok: true as const, schedule: viewSchedule(schedule) });
    },
  );
}

/** The audit row's detail: what was asked, without the prompt (the schedule keeps it; a refused one may be megabytes). */
function whatWasAsked(spec: { prompt: string; at?: string; cron?: string; timeZone?: string }): Record<string, unknown> {
  return { promptChars: spec.prompt.length, ...(spec.at !== undefined ? { at: spec.at } : {}), ...(spec.cron !== undefined ? { cron: spec.cron } : {}), ...(spec.timeZone !== undefined ? { timeZone: spec.timeZone } : {}) };
}

function refusalOf(outcome: ScheduleOutcome, conversationId: number): AdminError | undefined {
  switch (outcome.kind) {
    case 'invalid':
      return new AdminError('SCHEDULE_INVALID', outcome.message);
    case 'not_found':
      return notFound(conversationId);
    case 'over_limit':
      // An operator's schedules have no limit (maxActive null); kept so a later limit is answered, not dropped.
      return new AdminError('SCHEDULE_LIMIT', `at most ${outcome.limit} active schedules`);
    default:
      return undefined;
  }
}

function registerCancelRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().delete(
    '/schedules/:id',
    {
      schema: {
        tags,
        summary: 'Cancel an active schedule: it runs no more and is taken out of BullMQ; kept in the list as cancelled. Unknown, ended or already cancelled: 404 SCHEDULE_NOT_FOUND',
        params: IdParams,
        response: { 200: ScheduleResult, ...errors(400, 404) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const outcome = await endSchedule(scheduleDeps(ctx), { id });
      const target = `schedule:${id}`;
      if (outcome.kind === 'not_found') {
        await auditAction(ctx, ctx.db, request, { action: 'schedule.cancel', target, result: 'SCHEDULE_NOT_FOUND' });
        throw new AdminError('SCHEDULE_NOT_FOUND', `no active schedule ${id}`);
      }
      await auditAction(ctx, ctx.db, request, { action: 'schedule.cancel', target, result: 'ok', detail: { conversationId: outcome.schedule.conversationId } });
      return { ok: true as const, schedule: viewSchedule(outcome.schedule) };
    },
  );
}
