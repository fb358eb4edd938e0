import type { FastifyReply, FastifyRequest } from 'fastify';
import { sleepUnlessAborted } from './abortable.ts';
import type { DiscordStore } from './discord-store.ts';
import { DiscordApiError, type DiscordFaultRoute } from './discord-types.ts';
import { watchClient } from './http-helpers.ts';

export interface DiscordRestDeps {
  store: DiscordStore;
  shutdown: AbortSignal;
}

export interface RouteGuard {
  /** Needs `Authorization: Bot <token>` (webhook routes authenticate by their token instead). */
  auth: boolean;
  fault: Exclude<DiscordFaultRoute, '*'>;
  bucket: string;
  major: (request: FastifyRequest) => string;
}

/** The rate-limit bucket's major parameter of the channel routes. */
export const channelMajor = (request: FastifyRequest) => (request.params as { channelId: string }).channelId;

/** Auth, faults, then the bucket; true when the answer was already sent. */
export async function guardRoute(deps: DiscordRestDeps, request: FastifyRequest, reply: FastifyReply, spec: RouteGuard): Promise<boolean> {
  const { store, shutdown } = deps;
  if (spec.auth && !store.isAuthorised(request.headers.authorization)) {
    sendDiscordError(reply, new DiscordApiError(401, 0, '401: Unauthorized'));
    return true;
  }
  const fault = store.takeFault(spec.fault);
  if (fault?.kind === 'delay') {
    const { signal } = watchClient(reply, shutdown);
    await sleepUnlessAborted(fault.delayMs, signal);
  } else if (fault?.kind === '429') {
    sendRateLimited(reply, fault.retryAfter, store.takeBucket(spec.bucket, spec.major(request)).headers);
    return true;
  } else if (fault) {
    sendDiscordError(reply, new DiscordApiError(fault.status, 0, `${fault.status}: ${fault.status === 500 ? 'Internal Server Error' : 'Service Unavailable'}`));
    return true;
  }
  const bucket = store.takeBucket(spec.bucket, spec.major(request));
  void reply.headers(bucket.headers);
  if (bucket.limited) {
    sendRateLimited(reply, bucket.retryAfterSeconds, bucket.headers);
    return true;
  }
  return false;
}

function sendRateLimited(reply: FastifyReply, retryAfterSeconds: number, headers: Record<string, string>): FastifyReply {
  const retryAfter = Math.max(0, retryAfterSeconds);
  return reply
    .code(429)
    .headers({
      ...headers,
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset-after': retryAfter.toFixed(3),
      'x-ratelimit-scope': 'user',
      // Whole seconds in the header, the exact figure in the body, as Discord sends them.
      'retry-after': String(Math.max(1, Math.ceil(retryAfter))),
    })
    .send({ message: 'You are being rate limited.', retry_after: Math.round(retryAfter * 1000) / 1000, global: false });
}

export function sendDiscordError(reply: FastifyReply, error: DiscordApiError): FastifyReply {
  return reply.code(error.status).send({ message: error.message, code: error.code, ...(error.errors ? { errors: error.errors } : {}) });
}
