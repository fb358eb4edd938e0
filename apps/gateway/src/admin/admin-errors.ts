import { errorCodes, type ErrorCodeOf } from '@switchboard/core';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** The codes an admin response body carries (docs/errors.md); each one's status and retry hint live in the catalog. */
export type AdminErrorCode = ErrorCodeOf<'admin'>;

/** An admin request that cannot be served; `code` is stable and what clients branch on. */
export class AdminError extends Error {
  readonly code: AdminErrorCode;
  readonly statusCode: number;
  readonly retryable: boolean;
  readonly field: string | undefined;
  constructor(code: AdminErrorCode, message: string, options: { field?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'AdminError';
    this.code = code;
    this.statusCode = errorCodes[code].httpStatus;
    this.retryable = errorCodes[code].retryable;
    this.field = options.field;
  }
}

export function sendAdminError(reply: FastifyReply, error: AdminError) {
  return reply.code(error.statusCode).send({ ok: false, error: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) });
}

/**
 * The admin scope's error handler: schema failures become INVALID_REQUEST
 * naming the field; AdminErrors keep their code; anything else is a 500 whose
 * details stay in the log.
 */
export function handleAdminError(error: FastifyError | AdminError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AdminError) {
    request.log.info({ code: error.code, url: request.routeOptions.url }, 'admin request refused');
    return sendAdminError(reply, error);
  }
  if (error.validation && error.validation.length > 0) {
    const field = fieldOf(error.validation[0]) ?? error.validationContext ?? 'body';
    return sendAdminError(reply, new AdminError('INVALID_REQUEST', error.message, { field }));
  }
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status >= 500) {
    request.log.error({ err: error, url: request.routeOptions.url }, 'admin request failed');
    return reply.code(500).send({ ok: false, error: 'INTERNAL_ERROR', message: 'the request failed; see the gateway log' });
  }
  // Fastify's own 4xx (a malformed JSON body, a wrong content type): the client's mistake, said plainly.
  return reply.code(status).send({ ok: false, error: error.code ?? 'BAD_REQUEST', message: error.message });
}

/** The request field a schema failure is about: the failing property's path, or the missing or unexpected property. */
function fieldOf(failure: { instancePath?: string; params?: unknown } | undefined): string | undefined {
  if (!failure) return undefined;
  const params = (failure.params ?? {}) as { requiredProperties?: unknown; missingProperty?: unknown; additionalProperties?: unknown };
  const named = [params.requiredProperties, params.missingProperty, params.additionalProperties].flat().find((value) => typeof value === 'string');
  const path = (failure.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  if (named) return path ? `${path}.${named}` : named;
  return path || undefined;
}
