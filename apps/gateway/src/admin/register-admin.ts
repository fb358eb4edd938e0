import type { FastifyInstance } from 'fastify';
import type { AdminDeps } from './admin-context.ts';

/**
 * Everything under /admin (docs/admin.md). With ADMIN_TOKEN unset nothing is
 * registered at all: /admin answers 404 like any unknown path, and the
 * admin's modules (swagger and its UI, bull-board, @fastify/static for the
 * console) are never loaded: register-admin-surface.ts is imported only when
 * the admin is on, so a gateway without it does not carry them
 * (docs/benchmarks.md, "Memory from the production build").
 */
export async function registerAdmin(app: FastifyInstance, deps: AdminDeps): Promise<void> {
  if (!deps.config.ADMIN_TOKEN) {
    deps.log.info('admin API is off (no ADMIN_TOKEN): no /admin route exists');
    return;
  }
  const { registerAdminSurface } = await import('./register-admin-surface.ts');
  await registerAdminSurface(app, deps, deps.config.ADMIN_TOKEN);
}
