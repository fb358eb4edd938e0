import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { auditAction, type AdminContext } from '../admin-context.ts';
import { formatSessionCookie, isSecureCookie, sessionLifetimeMs, signSessionCookie } from '../admin-session-cookie.ts';
import { errors, Timestamp } from '../schemas/common-schemas.ts';

/**
 * Browser sign-in: a caller who authenticated (with the Bearer header) gets
 * the session cookie the console, /admin/docs and /admin/queues run on.
 * Sign-ins and sign-outs are audited (`session.start`, `session.end`) with
 * the client's address, never the token or the cookie. Failed sign-ins are
 * refused by the auth hook before they get here: they are in the log and
 * `switchboard_admin_auth_failures_total`, not in the audit log, so no
 * unauthenticated request can write a row.
 */
export function registerSessionRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const secure = (protocol: string) => isSecureCookie(ctx.config.ADMIN_COOKIE_SECURE, protocol);

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
      const expiresAt = new Date(cookie.expiresAt).toISOString();
      await auditAction(ctx, ctx.db, request, { action: 'session.start', target: `session:${token.name}`, result: 'ok', detail: { expiresAt } });
      reply.header('set-cookie', formatSessionCookie(cookie.value, { maxAgeSeconds: Math.floor(sessionLifetimeMs / 1000), secure: secure(request.protocol) }));
      return { ok: true as const, actor: token.name, expiresAt };
    },
  );

  app.delete(
    '/session',
    { schema: { tags: ['session'], summary: 'End the browser session (clears the cookie)', response: { 200: Type.Object({ ok: Type.Literal(true) }), ...errors() } } },
    async (request, reply) => {
      await auditAction(ctx, ctx.db, request, { action: 'session.end', target: `session:${request.adminActor}`, result: 'ok' });
      reply.header('set-cookie', formatSessionCookie('', { maxAgeSeconds: 0, secure: secure(request.protocol) }));
      return { ok: true as const };
    },
  );

  app.get(
    '/whoami',
    { schema: { tags: ['session'], summary: 'Who the credentials belong to', response: { 200: Type.Object({ actor: Type.String() }), ...errors() } } },
    async (request) => ({ actor: request.adminActor }),
  );
}
