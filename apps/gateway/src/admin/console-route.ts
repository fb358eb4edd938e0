import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

export const consoleRoot = fileURLToPath(new URL('../../public/admin/', import.meta.url));

/**
 * The console page (apps/gateway/public/admin): static HTML, JS and CSS with
 * no data in them, served without credentials so a browser can load the
 * sign-in form. Everything the page shows comes from the authenticated API.
 */
export async function registerConsole(scope: FastifyInstance): Promise<void> {
  scope.get('/', { schema: { hide: true } }, async (_request, reply) => reply.sendFile('index.html'));
  await scope.register(fastifyStatic, { root: consoleRoot, prefix: '/console/', wildcard: false, index: false, cacheControl: false });
}
