export type PlatformErrorCode = 'INVALID_PAYLOAD' | 'RATE_LIMITED' | 'REJECTED' | 'UNAVAILABLE';

/** Errors callers branch on by `code`; `retryable` and `retryAfterMs` drive the delivery policy. */
export class PlatformError extends Error {
  readonly code: PlatformErrorCode;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(code: PlatformErrorCode, message: string, options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'PlatformError';
    this.code = code;
    this.retryable = code === 'RATE_LIMITED' || code === 'UNAVAILABLE';
    this.retryAfterMs = options.retryAfterMs;
  }
}
