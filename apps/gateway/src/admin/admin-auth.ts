import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@switchboard/logger';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import { AdminError, sendAdminError } from './admin-errors.ts';
import { readCookie, sessionCookieName, verifySessionCookie } from './admin-session-cookie.ts';
import { findAdminToken, type AdminToken } from './admin-tokens.ts';
import { clientKeyOf, type FailureLimiter } from './failure-limiter.ts';

export interface AdminAuthOptions {
  tokens: readonly AdminToken[];
  limiter: FailureLimiter;
  metrics: GatewayMetrics;
  log: Logger;
  /** Routes that also take `?token=` (the events WebSocket: browsers cannot set its headers). */
  queryTokenRoutes: ReadonlySet<string>;
}

type Credential = { kind: 'bearer' | 'query'; token: AdminToken | undefined } | { kind: 'cookie'; token: AdminToken | undefined } | { kind: 'none' };

/**
 * onRequest hook of every authenticated admin route. Accepts, in order:
 * `Authorization: Bearer <token>`, the signed session cookie (browsers), and
 * `?token=` on the events stream only. Wrong credentials count against the
 * client address; past the limit the address is refused (429) even with a
 * right token until its window ends. Missing credentials are refused but not
 * counted: they guess nothing.
 */
export function createAdminAuthHook(options: AdminAuthOptions) {
  return async function authenticateAdmin(request: FastifyRequest, reply: FastifyReply) {
    // The client's own address behind a trusted proxy (TRUST_PROXY), never the proxy's: else ten bad requests lock every operator out.
    const address = request.ip;
    const limiterKey = clientKeyOf(address);
    const blockedMs = options.limiter.blockedForMs(limiterKey);
    if (blockedMs > 0) {
      options.metrics.countAdminAuthFailure('blocked');
      reply.header('retry-after', String(Math.ceil(blockedMs / 1000)));
      return sendAdminError(reply, new AdminError('TOO_MANY_FAILURES', 'too many failed authentications from this address; try again later'));
    }
    const credential = readCredential(request, options);
    if (credential.kind !== 'none' && credential.token) {
      if (credential.kind === 'cookie' && !isSameOrigin(request)) {
        // The cookie rides along on any request the browser makes; a foreign page must not act with it.
        return sendAdminError(reply, new AdminError('FORBIDDEN_ORIGIN', 'cross-origin request with the admin session cookie'));
      }
      request.adminActor = credential.token.name;
      return;
    }
    if (credential.kind === 'none') {
      // Not a guess (a browser opening the console before signing in): refused, but not counted against the address.
      options.metrics.countAdminAuthFailure('missing');
      request.log.debug({ clientAddress: address, url: request.routeOptions.url }, 'admin request without credentials');
    } else {
      options.limiter.recordFailure(limiterKey);
      options.metrics.countAdminAuthFailure('wrong');
      options.log.warn({ clientAddress: address, url: request.routeOptions.url, credential: credential.kind }, 'admin authentication failed');
    }
    reply.header('www-authenticate', 'Bearer realm="switchboard-admin"');
    return sendAdminError(reply, new AdminError('UNAUTHORIZED', credential.kind === 'none' ? 'missing admin credentials' : 'wrong admin credentials'));
  };
}

function readCredential(request: FastifyRequest, options: AdminAuthOptions): Credential {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.length > 0) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return { kind: 'bearer', token: match ? findAdminToken(options.tokens, match[1]) : undefined };
  }
  const cookie = readCookie(request.headers.cookie, sessionCookieName);
  if (cookie) return { kind: 'cookie', token: verifySessionCookie(options.tokens, cookie) };
  const query = request.query as Record<string, unknown> | undefined;
  if (options.queryTokenRoutes.has(request.routeOptions.url ?? '') && typeof query?.token === 'string') {
    return { kind: 'query', token: findAdminToken(options.tokens, query.token) };
  }
  return { kind: 'none' };
}

/**
 * Browsers send Origin on cross-origin requests and on every WebSocket; when
 * present it must be this host: the one the client asked for, which behind a
 * trusted proxy that rewrites Host is X-Forwarded-Host (request.host).
 */
function isSameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.host;
  } catch {
    return false;
  }
}
