import type { RunTurnResult } from '../agent-runtime.ts';
import type { AgentErrorCode } from '../agent-error.ts';
import type { RetriedOutcome } from './codex-request-retry.ts';
import type { TurnItems } from './codex-turn-items.ts';

/** How a Codex turn ended, before it becomes a RunTurnResult. */
export type TurnEnd =
  | { kind: 'completed' }
  | { kind: 'interrupted' }
  | { kind: 'failed'; code: AgentErrorCode; message: string }
  | { kind: 'crashed'; reason: string };

/** An `error` notification Codex will not retry by itself. */
export interface CodexErrorSeen {
  message: string;
  info: unknown;
}

/** The end a request's unusual outcome means: the child is gone, Codex stayed overloaded, or the turn was stopped meanwhile. */
export function endOfRequest(method: string, outcome: Exclude<RetriedOutcome, { kind: 'result' }>): TurnEnd {
  switch (outcome.kind) {
    case 'closed':
      return { kind: 'crashed', reason: `no answer to ${method}` };
    case 'overloaded':
      return { kind: 'failed', code: 'MODEL_RATE_LIMITED', message: `Codex stayed overloaded (-32001) on ${method}` };
    case 'aborted':
      return { kind: 'interrupted' };
    case 'error':
      return { kind: 'failed', code: 'MODEL_FAILED', message: `Codex refused ${method}: ${outcome.error.message}` };
  }
}

/**
 * The end of a turn someone asked to stop (an abort, or a cancel in the older
 * approval vocabulary). A completed turn is `interrupted` even if Codex
 * finished before the interrupt arrived: the user stopped it. A crash is
 * `interrupted` too: once a stop is asked, a child that dies or that we close
 * because it would not answer (turn/start pending, turn/interrupt ignored)
 * is part of stopping, never a crash the user is told about or that counts
 * toward suspension (issue 29, defect 6). A failure stays a failure.
 */
export function endOfStoppedTurn(end: TurnEnd, stopAsked: boolean): TurnEnd {
  if (!stopAsked) return end;
  return end.kind === 'completed' || end.kind === 'crashed' ? { kind: 'interrupted' } : end;
}

/** The end `turn/completed` reports, given any `error` notification seen before it. */
export function endOfCompletedTurn(status: string | null | undefined, turnError: string | undefined, errorSeen: CodexErrorSeen | undefined): TurnEnd {
  if (status === 'interrupted') return { kind: 'interrupted' };
  if (status === 'failed' || errorSeen) {
    return { kind: 'failed', code: codeOfCodexError(errorSeen?.info), message: turnError || errorSeen?.message || 'the Codex turn failed' };
  }
  return { kind: 'completed' };
}

/** Codex's usage limit and upstream 429s are rate limits (retryable); anything else is a model failure. */
export function codeOfCodexError(info: unknown): AgentErrorCode {
  const text = info === undefined ? '' : JSON.stringify(info) ?? '';
  return /usageLimitExceeded|"httpStatusCode":429/i.test(text) ? 'MODEL_RATE_LIMITED' : 'MODEL_FAILED';
}

/** What a turn left behind when it ended: its items, its ids, and whether Codex holds its input. */
export interface TurnRecord {
  items: TurnItems;
  threadId: string | undefined;
  turnId: string | undefined;
  inputReceived: boolean;
}

/** The turn's result: what the items made, the ids to keep, and the outcome. */
export function resultOfTurn(end: TurnEnd, { items, threadId, turnId, inputReceived }: TurnRecord): RunTurnResult {
  const base = {
    entries: items.entries(),
    toolIterations: items.toolIterations,
    ...(threadId ? { runtimeIds: { threadId, ...(turnId ? { turnId } : {}) } } : {}),
    ...(threadId && inputReceived ? { runtimeReceivedInput: true } : {}),
  };
  switch (end.kind) {
    case 'completed':
      return { ...base, outcome: 'completed', text: items.finalText };
    case 'interrupted':
      return { ...base, outcome: 'interrupted' };
    case 'failed':
      return { ...base, outcome: 'failed', failure: { code: end.code, message: end.message } };
    case 'crashed':
      return { ...base, outcome: 'failed', failure: { code: 'RUNTIME_CRASHED', message: `the Codex app-server stopped mid-turn (${end.reason})` } };
  }
}
