export type AgentErrorCode = 'MODEL_FAILED' | 'MODEL_RATE_LIMITED' | 'MODEL_REFUSED' | 'MODEL_TIMEOUT';

/** Why the model could not answer. A turn returns it as its failure; the summariser throws it. */
export class AgentError extends Error {
  readonly code: AgentErrorCode;

  constructor(code: AgentErrorCode, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'AgentError';
    this.code = code;
  }
}
