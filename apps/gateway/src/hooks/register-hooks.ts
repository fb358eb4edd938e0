import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HookConfig } from '@switchboard/config';
import { errorCodes } from '@switchboard/core';
import { IngressError, type IngressDeps } from '../ingress/accept-inbound.ts';
import { acceptHookCall, type HookOutcome } from './accept-hook.ts';
import { verifyHookSignature } from './hook-signature.ts';

/** A delivery id is part of the dedupe key: printable ASCII, short enough for the key's index. */
const deliveryIdPattern = /^[\x21-\x7e]{1,128}$/;

type HookRequest = FastifyRequest<{ Params: { name: string } }>;

/**
 * `POST /hooks/{name}` (docs/tools.md, "Triggered turns"), only when
 * HOOKS_FILE is set. The signature covers the raw bytes and the body is the
 * prompt's text whatever its type, so the route has its own scope whose one
 * parser hands the handler the bytes (the gateway's body limit applies).
 * Order as on the platforms' webhooks: verify, then check, store once, wake,
 * answer.
 */
export async function registerHooks(app: FastifyInstance, deps: IngressDeps, hooks: readonly HookConfig[]): Promise<void> {
  const byName = new Map(hooks.map((hook) => [hook.name, hook]));
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post<{ Params: { name: string } }>('/hooks/:name', (request: HookRequest, reply) => {
      // Answered once the body is read, not on the head: a client still writing its body never sees its connection reset.
      const hook = byName.get(request.params.name);
      if (!hook) return reply.code(404).send({ ok: false, error: 'HOOK_NOT_FOUND' });
      return handleHookCall(request, reply, { deps, hook });
    });
  });
}

async function handleHookCall(request: HookRequest, reply: FastifyReply, on: { deps: IngressDeps; hook: HookConfig }) {
  const { deps, hook } = on;
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  // Never the secret, the signature or the body in a log line: the hook's name and the outcome only.
  if (!verifyHookSignature(hook.secret, raw, request.headers['x-switchboard-signature'])) {
    request.log.warn({ route: 'hooks', hook: hook.name, outcome: 'unauthorized' }, 'hook call rejected: bad signature');
    return reply.code(401).send({ ok: false, error: 'HOOK_SIGNATURE_INVALID' });
  }
  const deliveryId = request.headers['x-switchboard-delivery'];
  if (typeof deliveryId !== 'string' || !deliveryIdPattern.test(deliveryId)) {
    return reply.code(400).send({ ok: false, error: 'HOOK_DELIVERY_INVALID', message: 'X-Switchboard-Delivery must be 1-128 printable ASCII characters' });
  }
  let outcome: HookOutcome;
  try {
    outcome = await acceptHookCall(deps, { hook, deliveryId, body: raw.toString('utf8') });
  } catch (error) {
    if (!(error instanceof IngressError)) throw error;
    request.log.error({ route: 'hooks', hook: hook.name, code: error.code, err: error.cause }, 'hook call not handed over; the caller may retry');
    return reply.code(503).send({ ok: false, error: error.code });
  }
  if (outcome.kind === 'stored') {
    request.log.info({ route: 'hooks', hook: hook.name, conversationId: outcome.conversationId, outcome: outcome.outcome }, 'hook call stored');
    return { ok: true, outcome: outcome.outcome };
  }
  request.log.warn({ route: 'hooks', hook: hook.name, code: outcome.code }, 'hook call refused; nothing stored');
  if (outcome.code === 'HOOK_RATE_LIMITED') void reply.header('retry-after', '60');
  return reply.code(errorCodes[outcome.code].httpStatus).send({ ok: false, error: outcome.code });
}
