import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { listOutbox, retryOutboxRow } from '@switchboard/db';
import { enqueueWake } from '@switchboard/queue';
import { auditAction, type AdminContext } from '../admin-context.ts';
import { AdminError } from '../admin-errors.ts';
import { errors, IdParams } from '../schemas/common-schemas.ts';
import { OutboxList, OutboxListQuery, OutboxView, viewOutbox } from '../schemas/operation-schemas.ts';

/** Undelivered and failed replies, and retrying one. */
export function registerOutboxRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/outbox',
    {
      schema: { tags: ['outbox'], summary: 'Outbox rows not delivered (pending or failed), newest first', querystring: OutboxListQuery, response: { 200: OutboxList, ...errors(400) } },
    },
    async (request) => {
      const q = request.query;
      const status = q.status === 'pending' || q.status === 'failed' ? q.status : 'undelivered';
      const page = await listOutbox(ctx.db, { status, conversationId: q.conversation, cursor: q.cursor, limit: q.limit ?? 50 });
      return { items: page.items.map(viewOutbox), nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/outbox/:id/retry',
    {
      schema: {
        tags: ['outbox'],
        summary: 'Retry one row now with a fresh attempt budget (it may then arrive after later replies)',
        params: IdParams,
        response: { 200: Type.Object({ ok: Type.Literal(true), outbox: OutboxView }), ...errors(404, 409) },
      },
    },
    async (request) => {
      const id = request.params.id;
      const result = await ctx.db.transaction(async (tx) => {
        const r = await retryOutboxRow(tx, id);
        const code = r.kind === 'not_found' ? 'OUTBOX_NOT_FOUND' : r.kind === 'already_sent' ? 'ALREADY_SENT' : 'ok';
        await auditAction(ctx, tx, request, { action: 'outbox.retry', target: `outbox:${id}`, result: code, detail: r.kind === 'retried' ? { conversationId: r.row.conversationId } : {} });
        return r;
      });
      if (result.kind === 'not_found') throw new AdminError('OUTBOX_NOT_FOUND', `no outbox row ${id}`);
      if (result.kind === 'already_sent') throw new AdminError('ALREADY_SENT', `outbox row ${id} was delivered already`);
      // The row is due now; if this wake-up is lost the recovery sweep delivers it anyway.
      await enqueueWake(ctx.queue, { conversationId: result.row.conversationId, inboundEventId: null, reason: 'outbox' }, `outbox-retry-${id}-${Date.now()}`).catch((err: unknown) =>
        ctx.log.warn({ err, outboxId: id }, 'wake-up for an outbox retry not queued; the recovery sweep will deliver it'),
      );
      return { ok: true as const, outbox: viewOutbox(result.row) };
    },
  );
}
