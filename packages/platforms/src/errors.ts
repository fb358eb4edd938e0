import { isRetryableCode, type ErrorCodeOf } from '@switchboard/core';

/** INVALID_PAYLOAD, RATE_LIMITED, REJECTED, UNAVAILABLE: the catalog in `@switchboard/core` (docs/errors.md). */
export type PlatformErrorCode = ErrorCodeOf<'platform'>;

/** Errors callers branch on by `code`; `retryable` and `retryAfterMs` drive the delivery policy. */
export class PlatformError extends Error {
  readonly code: PlatformErrorCode;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(code: PlatformErrorCode, message: string, options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'PlatformError';
    this.code = code;
    this.retryable = isRetryableCode(code);
    this.retryAfterMs = options.retryAfterMs;
  }
}
