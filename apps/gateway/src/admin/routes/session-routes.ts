import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AdminContext } from '../admin-context.ts';
import { formatSessionCookie, sessionLifetimeMs, signSessionCookie } from '../admin-session-cookie.ts';
import { errors, Timestamp } from '../schemas/common-schemas.ts';

/**
 * Browser sign-in: a caller who authenticated (with the Bearer header) gets
 * the session cookie the console, /admin/docs and /admin/queues run on.
 */
export function registerSessionRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/session',
    {
      schema: {
        tags: ['session'],
        summary: 'Start a browser session: sets an HttpOnly, SameSite=Strict cookie scoped to /admin',
        response: { 200: Type.Object({ ok: Type.Literal(true), actor: Type.String(), expiresAt: Timestamp }), ...errors() },
      },
    },
    async (request, reply) => {
      const token = ctx.tokens.find((candidate) => candidate.name === request.adminActor);
      if (!token) throw new Error('authenticated actor has no token');
      const cookie = signSessionCookie(token);
      reply.header('set-cookie', formatSessionCookie(cookie.value, { maxAgeSeconds: Math.floor(sessionLifetimeMs / 1000), secure: request.protocol === 'https' }));
      return { ok: true as const, actor: token.name, expiresAt: new Date(cookie.expiresAt).toISOString() };
    },
  );

  app.delete(
    '/session',
    { schema: { tags: ['session'], summary: 'End the browser session (clears the cookie)', response: { 200: Type.Object({ ok: Type.Literal(true) }), ...errors() } } },
    async (request, reply) => {
      reply.header('set-cookie', formatSessionCookie('', { maxAgeSeconds: 0, secure: request.protocol === 'https' }));
      return { ok: true as const };
    },
  );

  app.get(
    '/whoami',
    { schema: { tags: ['session'], summary: 'Who the credentials belong to', response: { 200: Type.Object({ actor: Type.String() }), ...errors() } } },
    async (request) => ({ actor: request.adminActor }),
  );
}
