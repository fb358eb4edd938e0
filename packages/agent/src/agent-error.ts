import type { TranscriptEntry } from './transcript-entry.ts';

export type AgentErrorCode = 'MODEL_FAILED' | 'MODEL_RATE_LIMITED' | 'MODEL_REFUSED' | 'MODEL_TIMEOUT';

export class AgentError extends Error {
  readonly code: AgentErrorCode;
  /** Entries the turn completed before the failure (tool calls and their results). */
  readonly entries: TranscriptEntry[];

  constructor(code: AgentErrorCode, message: string, entries: TranscriptEntry[], cause?: unknown) {
    super(message, { cause });
    this.name = 'AgentError';
    this.code = code;
    this.entries = entries;
  }
}
