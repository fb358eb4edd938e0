import type { FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Content-Security-Policy of the console and the API: helmet's default
 * directives, tightened. Styles and fonts come only from this origin (helmet
 * also allows inline styles and any https: source): the console page shows
 * chat transcripts, which are user content, and has no inline script or
 * style. No page may be framed. `upgrade-insecure-requests` is dropped so the
 * console still works over plain http on a private address.
 */
const consoleDirectives = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
};

/**
 * Security headers on every /admin response (issue 17, defect 9): the CSP
 * above, `X-Frame-Options: DENY`, `X-Content-Type-Options: nosniff` and
 * helmet's other defaults. HSTS is left to the TLS proxy: it binds the whole
 * host for a year, and only the proxy knows that every path of it is https.
 */
export const adminSecurityHeaders: FastifyHelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: consoleDirectives },
  frameguard: { action: 'deny' },
  strictTransportSecurity: false,
};

/**
 * Swagger UI (`/admin/docs`) adds a `<style>` element, and bull-board's page
 * (`/admin/queues`) has inline styles and loads Google Fonts; their pages get
 * that much more, scripts still only from this origin. An onRequest hook of
 * their scopes, after helmet's own (the admin scope's hooks run first).
 */
export async function allowThirdPartyStyles(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await reply.helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        ...consoleDirectives,
        'style-src': ["'self'", "'unsafe-inline'", 'https://fonts.googleapis.com'],
        'font-src': ["'self'", 'https://fonts.gstatic.com'],
      },
    },
  });
}
