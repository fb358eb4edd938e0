import { describe, expect, it } from 'vitest';
import { errorCodes, isRetryableCode, shapeError, type ErrorCode } from './error-codes.ts';

describe('the error code catalog', () => {
  it('writes every code in one case style', () => {
    for (const code of Object.keys(errorCodes)) expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
  });

  it('keeps the statuses the admin API and the webhooks answer with (docs/admin.md, DESIGN §3)', () => {
    const statuses = Object.fromEntries(Object.entries(errorCodes).flatMap(([code, spec]) => ('httpStatus' in spec ? [[code, spec.httpStatus]] : [])));
    expect(statuses).toEqual({
      STORE_FAILED: 503,
      STORE_TOO_LATE: 503,
      ENQUEUE_FAILED: 503,
      HOOK_NOT_FOUND: 404,
      HOOK_SIGNATURE_INVALID: 401,
      HOOK_DELIVERY_INVALID: 400,
      HOOK_CONVERSATION_MISSING: 409,
      HOOK_CONVERSATION_SUSPENDED: 409,
      HOOK_RATE_LIMITED: 429,
      SCHEDULE_INVALID: 400,
      SCHEDULE_LIMIT: 409,
      SCHEDULE_NOT_FOUND: 404,
      INVALID_PAYLOAD: 400,
      UNAUTHORIZED: 401,
      TOO_MANY_FAILURES: 429,
      FORBIDDEN_ORIGIN: 403,
      INVALID_REQUEST: 400,
      CONFIRMATION_MISMATCH: 400,
      CONVERSATION_NOT_FOUND: 404,
      SESSION_NOT_FOUND: 404,
      OUTBOX_NOT_FOUND: 404,
      QUEUE_NOT_FOUND: 404,
      JOB_NOT_FOUND: 404,
      ALREADY_SUSPENDED: 409,
      NOT_SUSPENDED: 409,
      ALREADY_SENT: 409,
      JOB_NOT_FAILED: 409,
      PAIRING_NOT_FOUND: 404,
      PAIRING_EXPIRED: 410,
      PAIRED_USER_NOT_FOUND: 404,
      READ_ONLY: 405,
      FULL_ACCESS_DISABLED: 403,
      REDIS_UNAVAILABLE: 503,
      INTERNAL_ERROR: 500,
    });
  });

  it('marks as retryable exactly what can succeed later unchanged', () => {
    const retryable = (Object.keys(errorCodes) as ErrorCode[]).filter(isRetryableCode).sort();
    expect(retryable).toEqual(
      ['CONVERSATION_BUSY', 'ENQUEUE_FAILED', 'HOOK_RATE_LIMITED', 'MODEL_RATE_LIMITED', 'MODEL_TIMEOUT', 'RATE_LIMITED', 'REDIS_UNAVAILABLE', 'STORE_FAILED', 'STORE_TOO_LATE', 'TOO_MANY_FAILURES', 'UNAVAILABLE'].sort(),
    );
  });

  it('shapes an error with its retry hint', () => {
    expect(shapeError('RATE_LIMITED', 'slow down', 2000)).toEqual({ code: 'RATE_LIMITED', message: 'slow down', retryable: true, retryAfterMs: 2000 });
    expect(shapeError('REJECTED', 'no')).toEqual({ code: 'REJECTED', message: 'no', retryable: false });
  });
});
