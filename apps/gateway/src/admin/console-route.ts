import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

// From apps/gateway/src/admin when run from source, from dist/ when bundled by `npm run build`.
const consoleRoots = ['../../public/admin/', '../apps/gateway/public/admin/'].map((path) => fileURLToPath(new URL(path, import.meta.url)));
export const consoleRoot = consoleRoots.find((dir) => existsSync(dir)) ?? consoleRoots[0]!;

/**
 * The console page (apps/gateway/public/admin): static HTML, JS and CSS with
 * no data in them, served without credentials so a browser can load the
 * sign-in form. Everything the page shows comes from the authenticated API.
 */
export async function registerConsole(scope: FastifyInstance): Promise<void> {
  scope.get('/', { schema: { hide: true } }, async (_request, reply) => reply.sendFile('index.html'));
  await scope.register(fastifyStatic, { root: consoleRoot, prefix: '/console/', wildcard: false, index: false, cacheControl: false });
}
