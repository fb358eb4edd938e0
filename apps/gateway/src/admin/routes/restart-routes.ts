import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { listRestartCounters, listSuspendedConversations } from '@switchboard/db';
import type { AdminContext } from '../admin-context.ts';
import { errors } from '../schemas/common-schemas.ts';
import { viewConversation } from '../schemas/conversation-schemas.ts';
import { RestartsView } from '../schemas/operation-schemas.ts';

const listLimit = 200;

/** Restart counters and suspended conversations (docs/restarts.md): what the restart-loop guard looks at. */
export function registerRestartRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/restarts',
    {
      schema: {
        tags: ['restarts'],
        summary: `Conversations with a restart counter above zero and suspended conversations (at most ${listLimit} each)`,
        response: { 200: RestartsView, ...errors() },
      },
    },
    async () => {
      const [counters, suspended] = await Promise.all([listRestartCounters(ctx.db, listLimit), listSuspendedConversations(ctx.db, listLimit)]);
      return { counters: counters.map(viewConversation), suspended: suspended.map(viewConversation) };
    },
  );
}
