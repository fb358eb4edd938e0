import { isRetryableCode, type ErrorCodeOf } from '@switchboard/core';

/** MODEL_FAILED, MODEL_RATE_LIMITED, MODEL_REFUSED, MODEL_TIMEOUT: the `model` family of the catalog (docs/errors.md). */
export type AgentErrorCode = ErrorCodeOf<'model'>;

/** Why the model could not answer. A turn returns it as its failure; the summariser throws it. */
export class AgentError extends Error {
  readonly code: AgentErrorCode;
  /** Whether a later try may succeed (rate limit, timeout), from the catalog. */
  readonly retryable: boolean;

  constructor(code: AgentErrorCode, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'AgentError';
    this.code = code;
    this.retryable = isRetryableCode(code);
  }
}
