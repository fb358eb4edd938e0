import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { listTurns, type TurnStatus } from '@switchboard/db';
import type { AdminContext } from '../admin-context.ts';
import { errors } from '../schemas/common-schemas.ts';
import { TurnList, TurnListQuery, viewTurn } from '../schemas/operation-schemas.ts';

/** Running and recent turns with their outcome and duration. */
export function registerTurnRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/turns',
    {
      schema: {
        tags: ['turns'],
        summary: 'Turns, newest first (status=running for the running ones)',
        querystring: TurnListQuery,
        response: { 200: TurnList, ...errors(400) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listTurns(ctx.db, { status: q.status as TurnStatus | undefined, conversationId: q.conversation, cursor: q.cursor, limit: q.limit ?? 50 });
      return { items: page.items.map(viewTurn), nextCursor: page.nextCursor };
    },
  );
}
