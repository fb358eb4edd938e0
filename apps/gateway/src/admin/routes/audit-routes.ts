import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { listAuditEntries } from '@switchboard/db';
import type { AdminContext } from '../admin-context.ts';
import { errors } from '../schemas/common-schemas.ts';
import { AuditList, AuditListQuery, viewAudit } from '../schemas/operation-schemas.ts';

/** The audit log of admin actions: who (token name), what, when, the target, the result, from where. */
export function registerAuditRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/audit',
    {
      schema: { tags: ['audit'], summary: 'Audit log, newest first', querystring: AuditListQuery, response: { 200: AuditList, ...errors(400) } },
    },
    async (request) => {
      const q = request.query;
      const page = await listAuditEntries(ctx.db, { actor: q.actor, action: q.action, target: q.target, cursor: q.cursor, limit: q.limit ?? 50 });
      return { items: page.items.map(viewAudit), nextCursor: page.nextCursor };
    },
  );
}
