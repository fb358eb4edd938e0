import type { TranscriptMessage } from '@switchboard/core';
import type { AgentErrorCode } from './agent-error.ts';
import type { TranscriptEntry } from './transcript-entry.ts';

/**
 * The runtime interface, in the project's words: the turn engine, compression
 * and restarts speak only this, never a model vendor's types. A runtime (the
 * OpenAI one today, Codex next) converts at its own edge. See README.md.
 */
export interface AgentRuntime {
  runTurn(request: RunTurnRequest): Promise<RunTurnResult>;
  /**
   * What every request carries besides the instructions and the history, as
   * the model receives it (the tool schemas): counted into each request's
   * fixed tokens for the compression and trimming estimates.
   */
  readonly fixedRequestText: string;
}

/** The turn a tool call belongs to, as the worker knows it (ToolContext.caller). */
export interface ToolCaller {
  conversationId: number;
  /** The turn's user, `platform:account:user` (turns.user_key). */
  userKey: string;
  /** The platform's user id alone: `hook:<name>` or `schedule:<id>` for a turn no person started. */
  userId: string;
  /**
   * Names the turn's input (`<conversation>:<first input event id>`), the
   * same when the turn is run again after a crash: a tool that creates
   * something keys it by this, so the second run finds what the first made.
   */
  turnKey: string;
}

export interface RunTurnRequest {
  /** The system prompt: read first, before the history. */
  instructions: string;
  /** The session's transcript as stored (oldest first; the oldest may be left out to fit the context). */
  history: readonly TranscriptMessage[];
  /**
   * API-only notes (docs/turns.md, "The recovery note"; docs/restarts.md,
   * "Resume once"): read by the model right before the input, once. Never
   * stored, never in `entries`, and left out of the turn's follow-up requests
   * once the first request was accepted.
   */
  notes: readonly string[];
  /** The new user messages this turn answers, oldest first (stored by the caller, not returned in `entries`). */
  input: readonly string[];
  /**
   * The images of `input[i]` (photos the user sent with it), for this turn
   * only: the text of such an input names each image ("[image: …]"), which is
   * what the transcript keeps (docs/media.md). A runtime that cannot show
   * images reads the text alone. Absent or empty: none.
   */
  inputImages?: readonly (readonly InputImage[])[];
  /** Aborted on /stop, an interrupt, shutdown, a lost lease or the turn's time limit: the turn ends as `interrupted`. */
  signal: AbortSignal;
  /**
   * Called once, when the model first accepted the turn's request (its
   * answer began): the point where the notes count as delivered. The turn
   * waits for it before reading the answer.
   */
  onModelAccepted?: () => void | Promise<void>;
  /**
   * Called as the answer's text grows, with all of the current model step's
   * text so far (not a delta): a step that ends in tool calls is followed by
   * the next step's text, which starts again from ''. The caller may show it
   * early (STREAMING); the committed reply is still `text` of the result.
   * Must not throw or block; runtimes that cannot stream never call it.
   */
  onText?: (text: string) => void;
  /** Called before each follow-up model request; returns user input to add to the running turn (busy mode steer). */
  takeSteerInput?: () => Promise<SteerInput[]>;
  /** Asks the user to approve an action (a runtime that runs commands). Runtimes that never ask ignore it. */
  askUser?: AskUser;
  /**
   * Asked right before the input is handed to a runtime that acts on it on
   * this machine (Codex's `turn/start`, whose commands change the workspace):
   * true (or a promise of true, resolved when it is) means the caller still
   * holds the turn; false, nothing is sent and the turn ends as interrupted.
   * The worker's answer: its own heartbeat is fresh, or it waits for the next
   * beat, so a worker woken from a stall it may have been declared dead in
   * never starts Codex on input a peer took over. Absent: always true.
   */
  mayHandOver?: () => boolean | Promise<boolean>;
  /** Ids the runtime returned for this conversation's previous turn (a thread to continue). */
  runtimeIds?: RuntimeIds;
  /**
   * The stored messages of `history` that the thread of `runtimeIds` never
   * received (a turn stopped before its input reached it, docs/codex.md,
   * "Threads"), oldest first. A runtime that keeps its own context carries
   * them before the input when it continues that thread; absent: none.
   */
  runtimeUnseen?: readonly TranscriptMessage[];
  /**
   * The turn's user (`platform:account:user`, turns.user_key): what a runtime
   * limits per user (the Codex pool's children, CODEX_MAX_CHILDREN_PER_USER).
   */
  userKey?: string;
  /** Who the turn's tool calls act for (the `schedule` tool's conversation and user); absent: such tools refuse. */
  caller?: ToolCaller;
}

/** An image as the model receives it: a `data:` URL of the bytes the user sent (capped by MEDIA_MAX_BYTES). */
export interface InputImage {
  dataUrl: string;
}

export interface SteerInput {
  text: string;
  inboundEventId: number;
}

/** What the runtime wants approved, in words the user reads. */
export interface ApprovalQuestion {
  /** What kind of action: a command to run, files to change, or anything else a runtime asks. */
  kind: 'command' | 'file_change' | 'other';
  /** One line: what the runtime is about to do ("run `rm -rf build`"). */
  summary: string;
  /** The command line and its directory, the files to change, or the path, shown below the summary. */
  detail?: string;
}

/**
 * The user's answer. `approved_for_session`: approve this and the same kind of
 * action for the rest of the runtime's session. `denied`: refuse this action,
 * the turn goes on. `cancelled`: refuse and end the turn (a /stop or an
 * interrupt while asking). `unanswered`: nobody answered in time or there was
 * no way to ask; the runtime treats it as a refusal (fail closed).
 */
export type ApprovalAnswer =
  | { decision: 'approved' }
  | { decision: 'approved_for_session' }
  | { decision: 'denied' }
  | { decision: 'cancelled' }
  | { decision: 'unanswered' };

/** Puts a question to the user of the conversation and resolves with the answer; never throws for an expected outcome. */
export type AskUser = (question: ApprovalQuestion, signal: AbortSignal) => Promise<ApprovalAnswer>;

/** A runtime's own ids worth keeping across turns (a Codex thread and turn); the OpenAI runtime has none. */
export interface RuntimeIds {
  threadId?: string;
  turnId?: string;
}

/** Why a turn failed: the model's failure, with its stable code. */
export interface TurnFailure {
  code: AgentErrorCode;
  message: string;
  cause?: unknown;
}

interface TurnResultBase {
  /** What the turn adds to the transcript besides `input`, in order: steered input, assistant messages, tool results. */
  entries: TranscriptEntry[];
  /** Model steps that ended in tool calls. */
  toolIterations: number;
  runtimeIds?: RuntimeIds;
  /** The thread of `runtimeIds` received this turn's input (and `runtimeUnseen`); only a runtime that keeps its own context says so. */
  runtimeReceivedInput?: boolean;
  /** The model that answered (or last failed), for the turn's row and metrics; runtimes without a model name leave it out. */
  model?: string;
}

/** How a turn ended. Expected outcomes are values: only a bug in the runtime throws. */
export type RunTurnResult =
  /** `text`: the final assistant text ('' when the model answered nothing). */
  | (TurnResultBase & { outcome: 'completed'; text: string })
  /** The signal was aborted: `entries` holds what was finished (every tool call with a result). */
  | (TurnResultBase & { outcome: 'interrupted' })
  /** The model could not answer: `entries` holds what was finished before. */
  | (TurnResultBase & { outcome: 'failed'; failure: TurnFailure });

/** The summary compression asks for: transcript text in, summary text out; a failure throws an AgentError. */
export interface Summariser {
  summarise(transcript: string): Promise<string>;
}
