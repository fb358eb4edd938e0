import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import { AdminError, sendAdminError } from './admin-errors.ts';
import { allowThirdPartyStyles } from './security-headers.ts';

export const bullBoardPath = '/admin/queues';

/**
 * bull-board's UI for the queues, inside the authenticated admin scope (so
 * behind the same auth), for looking only (issue 17, defect 6). Its own
 * buttons pause, clean, empty, obliterate and add jobs without a trace in the
 * audit log; changes go through the audited admin API instead (`POST
 * /admin/queue/{queue}/jobs/{jobId}/retry`). `readOnlyMode` makes bull-board
 * hide those buttons and answer its own mutating routes with 405 (it also
 * forces `allowRetries` off), and the hook below refuses every method but GET
 * and HEAD before bull-board sees the request, so a route a later bull-board
 * adds without the read-only check cannot write either.
 */
export async function registerBullBoard(scope: FastifyInstance, queues: Queue[]): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(bullBoardPath);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true, allowRetries: false })),
    // @bull-board/fastify pins its own copy of @bull-board/api; the two declare the same adapter interface.
    serverAdapter: serverAdapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'],
    options: { uiConfig: { boardTitle: 'Switchboard queues' } },
  });
  await scope.register(async (board) => {
    board.addHook('onRequest', async (request, reply) => {
      if (request.method === 'GET' || request.method === 'HEAD') return;
      reply.header('allow', 'GET, HEAD');
      return sendAdminError(reply, new AdminError('READ_ONLY', 'bull-board is read-only; change queues and jobs through the audited admin API (docs/admin.md)'));
    });
    board.addHook('onRequest', allowThirdPartyStyles);
    await board.register(serverAdapter.registerPlugin());
  }, { prefix: '/queues' });
}
