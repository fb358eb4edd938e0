export type HarnessErrorCode = 'SERVICE_MISSING' | 'SERVICE_START_FAILED' | 'NOT_PROVIDED';

/**
 * A harness failure the person running the tests can act on (install
 * something, read a server log). The message is one line; the stack is
 * dropped because it points into the harness, never at the cause.
 */
export class HarnessError extends Error {
  constructor(
    readonly code: HarnessErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'HarnessError';
    this.stack = `${this.name} [${code}]: ${message}`;
  }
}
