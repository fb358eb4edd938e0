import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** apps/gateway/public/admin/, found upward from this module: apps/gateway/src/admin from source, dist/ or dist/chunks/ from a build. */
function findConsoleRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    for (const candidate of [join(dir, 'public/admin'), join(dir, 'apps/gateway/public/admin')]) {
      if (existsSync(join(candidate, 'index.html'))) return `${candidate}/`;
    }
    if (dirname(dir) === dir) return fileURLToPath(new URL('../../public/admin/', import.meta.url));
  }
}

export const consoleRoot = findConsoleRoot(dirname(fileURLToPath(import.meta.url)));

/**
 * The console page (apps/gateway/public/admin): static HTML, JS and CSS with
 * no data in them, served without credentials so a browser can load the
 * sign-in form. Everything the page shows comes from the authenticated API.
 */
export async function registerConsole(scope: FastifyInstance): Promise<void> {
  scope.get('/', { schema: { hide: true } }, async (_request, reply) => reply.sendFile('index.html'));
  await scope.register(fastifyStatic, { root: consoleRoot, prefix: '/console/', wildcard: false, index: false, cacheControl: false });
}
