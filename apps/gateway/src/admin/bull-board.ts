import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import type { TurnQueue } from '@switchboard/queue';

export const bullBoardPath = '/admin/queues';

/** bull-board's UI for the queues, inside the authenticated admin scope (so behind the same auth). */
export async function registerBullBoard(scope: FastifyInstance, queues: TurnQueue[]): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(bullBoardPath);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue)),
    // @bull-board/fastify pins its own copy of @bull-board/api; the two declare the same adapter interface.
    serverAdapter: serverAdapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'],
    options: { uiConfig: { boardTitle: 'Switchboard queues' } },
  });
  await scope.register(serverAdapter.registerPlugin(), { prefix: '/queues' });
}
