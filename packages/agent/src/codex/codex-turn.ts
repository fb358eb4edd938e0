import type { ApprovalAnswer, ApprovalQuestion, AskUser, RunTurnRequest, RunTurnResult } from '../agent-runtime.ts';
import { approvalItemId, approvalKindOf, describeApproval, interruptsTurn, toWireDecision, type ApprovalRequestKind } from './codex-approvals.ts';
import type { CodexConnection, IncomingMessage } from './codex-connection.ts';
import { buildTurnText, sandboxPolicyOf, threadSettingsOf } from './codex-input.ts';
import {
  errorNotificationSchema,
  agentMessageDeltaSchema,
  itemNotificationSchema,
  parseLeniently,
  rpcCodes,
  turnNotificationSchema,
  turnStartResultSchema,
  type RpcId,
} from './codex-protocol.ts';
import { requestWithRetry } from './codex-request-retry.ts';
import { openThread, type ThreadContext } from './codex-thread.ts';
import { endOfCompletedTurn, endOfRequest, endOfStoppedTurn, resultOfTurn, type CodexErrorSeen, type TurnEnd } from './codex-turn-end.ts';
import { createTurnItems, type TurnItems } from './codex-turn-items.ts';

export interface CodexTurnContext extends ThreadContext {
  /** After `turn/interrupt`, how long to wait for `turn/completed` before the child is closed. */
  interruptTimeoutMs: number;
  closeGraceMs: number;
}

/**
 * One turn on a live child (docs/codex.md, "A turn"): open the thread,
 * `turn/start`, then read notifications until `turn/completed`, the child's
 * end or an interrupt. Never throws for an expected outcome.
 */
export async function runCodexTurn(context: CodexTurnContext, request: RunTurnRequest): Promise<RunTurnResult> {
  const watch = watchTurn(context, request);
  try {
    if (request.signal.aborted) return watch.result({ kind: 'interrupted' });
    const thread = await openThread(context, request);
    if (thread.kind === 'ended') return watch.result(thread.end);
    watch.setThread(thread.threadId);
    const { conversation } = context;
    const params = {
      threadId: thread.threadId,
      input: [{ type: 'text', text: buildTurnText({ history: thread.isNew ? request.history : (request.runtimeUnseen ?? []), input: request.input }) }],
      cwd: conversation.cwd,
      approvalPolicy: threadSettingsOf(conversation.profile).approvalPolicy,
      sandboxPolicy: sandboxPolicyOf(conversation.profile, conversation.cwd),
    };
    const started = await requestWithRetry(context.connection, 'turn/start', params, {
      retry: context.retry,
      signal: request.signal,
      ...(request.mayHandOver ? { mayStart: request.mayHandOver } : {}),
    });
    if (started.kind !== 'result') return watch.result(endOfRequest('turn/start', started));
    watch.markReceived();
    const turnId = parseLeniently(turnStartResultSchema, started.result)?.turn.id;
    if (turnId) watch.adoptTurnId(turnId);
    await watch.accept();
    return watch.result(await watch.ended);
  } finally {
    watch.dispose();
  }
}

interface TurnWatch {
  setThread(threadId: string): void;
  adoptTurnId(turnId: string): void;
  /** Codex answered turn/start: it holds the turn's input (RunTurnResult.runtimeReceivedInput). */
  markReceived(): void;
  /** Calls onModelAccepted once (at turn/start's answer or turn/started, whichever comes first) and waits for it. */
  accept(): Promise<void>;
  readonly ended: Promise<TurnEnd>;
  result(end: TurnEnd): RunTurnResult;
  dispose(): void;
}

/** What a running turn knows so far; the notifications fill it in. */
interface TurnState {
  /** Until a thread is open, the one the caller kept: a turn that fails before then hands it back unchanged. */
  threadId: string | undefined;
  turnId: string | undefined;
  /** Codex answered turn/start or sent turn/started: the thread holds this turn's input. */
  inputReceived: boolean;
  items: TurnItems;
  errorSeen: CodexErrorSeen | undefined;
  interruptWanted: boolean;
  interruptSent: boolean;
  /** The agent message growing now, for RunTurnRequest.onText (streamed replies). */
  growing: { itemId: string; text: string } | undefined;
  onText: ((text: string) => void) | undefined;
  finish(end: TurnEnd): void;
  markAccepted(): Promise<void>;
}

/** Listens to the child for the whole turn: items, the turn's end, server requests, the child's exit and the abort. */
function watchTurn(context: CodexTurnContext, request: RunTurnRequest): TurnWatch {
  const { connection } = context;
  const turnOver = new AbortController();
  let accepted: Promise<void> | undefined;
  let finish: (end: TurnEnd) => void = () => {};
  const ended = new Promise<TurnEnd>((resolve) => (finish = resolve));
  const state: TurnState = {
    threadId: request.runtimeIds?.threadId,
    turnId: undefined,
    inputReceived: false,
    items: createTurnItems(),
    errorSeen: undefined,
    interruptWanted: false,
    interruptSent: false,
    growing: undefined,
    onText: request.onText,
    finish: (end) => finish(end),
    markAccepted: () => (accepted ??= Promise.resolve(request.onModelAccepted?.())),
  };
  const interrupter = createInterrupter(context, state);
  const answerer = createRequestAnswerer(context, request, { findItem: state.items.find, over: turnOver.signal, interrupt: interrupter.interrupt });
  connection.setListener((message) => {
    if (message.kind === 'request') answerer(message);
    else readTurnNotification(state, message.method, message.params, interrupter.sendWhenPossible);
  });
  void connection.closed.then((reason) => finish({ kind: 'crashed', reason }));
  request.signal.addEventListener('abort', interrupter.interrupt, { once: true });

  return {
    setThread: (id) => (state.threadId = id),
    adoptTurnId(id) {
      state.turnId ??= id;
      interrupter.sendWhenPossible();
    },
    markReceived: () => (state.inputReceived = true),
    accept: () => state.markAccepted(),
    ended,
    result: (end) => resultOfTurn(endOfStoppedTurn(end, state.interruptWanted), state),
    dispose() {
      turnOver.abort();
      interrupter.dispose();
      request.signal.removeEventListener('abort', interrupter.interrupt);
      connection.setListener(createIdleListener(connection));
    },
  };
}

/**
 * `turn/interrupt` once the turn's id is known (an abort can come before
 * turn/start's answer), and the child closed when it does not end the turn in
 * time: a child that ignores an interrupt cannot be trusted with the next turn.
 */
function createInterrupter(context: CodexTurnContext, state: TurnState) {
  const { connection, logger } = context;
  let timer: NodeJS.Timeout | undefined;
  let disposed = false;
  const sendWhenPossible = () => {
    const { threadId, turnId } = state;
    if (!state.interruptWanted || state.interruptSent || !threadId || !turnId) return;
    state.interruptSent = true;
    void connection.request('turn/interrupt', { threadId, turnId }).then((outcome) => {
      if (outcome.kind === 'error') logger.warn({ error: outcome.error.message }, 'codex refused turn/interrupt');
    });
  };
  const interrupt = () => {
    // After the turn: an older-vocabulary question cancelled by the turn's end
    // calls this too, and a timer armed then would close the child under the
    // next turn (issue 29, defect 8).
    if (disposed) return;
    state.interruptWanted = true;
    sendWhenPossible();
    timer ??= setTimeout(() => {
      logger.warn({ timeoutMs: context.interruptTimeoutMs }, 'codex did not end the interrupted turn in time; closing the child');
      void connection.close(context.closeGraceMs);
      state.finish({ kind: 'interrupted' });
    }, context.interruptTimeoutMs);
  };
  const dispose = () => {
    disposed = true;
    clearTimeout(timer);
  };
  return { sendWhenPossible, interrupt, dispose };
}

/** One notification of the running turn. Deltas, token usage and anything unknown are not needed for the result and never fatal. */
function readTurnNotification(state: TurnState, method: string, params: unknown, sendInterruptWhenPossible: () => void): void {
  if (method === 'turn/started' || method === 'turn/completed') {
    const turn = parseLeniently(turnNotificationSchema, params)?.turn;
    if (!turn || (state.turnId && turn.id !== state.turnId)) return;
    state.turnId ??= turn.id;
    state.inputReceived = true;
    sendInterruptWhenPossible();
    if (method === 'turn/started') void state.markAccepted();
    else state.finish(endOfCompletedTurn(turn.status, turn.error?.message, state.errorSeen));
  } else if (method === 'item/started' || method === 'item/completed') {
    const notification = parseLeniently(itemNotificationSchema, params);
    if (!notification || (state.turnId && notification.turnId && notification.turnId !== state.turnId)) return;
    if (method === 'item/started') state.items.started(notification.item);
    else state.items.completed(notification.item);
  } else if (method === 'item/agentMessage/delta' && state.onText) {
    showGrowingText(state, params);
  } else if (method === 'error') {
    const notification = parseLeniently(errorNotificationSchema, params);
    // willRetry: Codex retries by itself and the turn goes on.
    if (notification && notification.willRetry !== true) {
      state.errorSeen = { message: notification.error.message, info: notification.error.codexErrorInfo };
    }
  }
}

/** The text of the agent message now growing, whole (a new message starts again from its first delta). */
function showGrowingText(state: TurnState, params: unknown): void {
  const delta = parseLeniently(agentMessageDeltaSchema, params);
  if (!delta || (state.turnId && delta.turnId && delta.turnId !== state.turnId)) return;
  const text = state.growing?.itemId === delta.itemId ? state.growing.text + delta.delta : delta.delta;
  state.growing = { itemId: delta.itemId, text };
  state.onText?.(text);
}

/** What answering the child's requests needs of the running turn. */
interface AnsweringTurn {
  findItem: TurnItems['find'];
  /** Aborted when the turn is over: a question still open is cancelled. */
  over: AbortSignal;
  interrupt: () => void;
}

/**
 * Answers the child's requests during a turn. Approvals are answered when the
 * user has (askUser runs beside the reader, which goes on reading); any other
 * request gets -32601 at once, so the child never waits on us.
 */
function createRequestAnswerer(
  context: CodexTurnContext,
  request: RunTurnRequest,
  turn: AnsweringTurn,
): (message: Extract<IncomingMessage, { kind: 'request' }>) => void {
  const { connection, logger } = context;
  const { findItem, interrupt } = turn;
  const askSignal = AbortSignal.any([request.signal, turn.over]);
  return (message) => {
    const kind = approvalKindOf(message.method);
    if (!kind) {
      logger.info({ method: message.method }, 'codex sent a request this client does not serve; answered -32601');
      connection.respondError(message.id, rpcCodes.methodNotFound, `${message.method} is not supported by this client`);
      return;
    }
    const question = describeApproval(kind, message.params, findItem(approvalItemId(kind, message.params) ?? ''));
    const answering = context.conversation.autoApprove
      ? Promise.resolve<ApprovalAnswer>({ decision: 'approved' })
      : askSafely(request.askUser, question, askSignal);
    void answering.then((answer) => answerApproval(context, { id: message.id, kind }, answer, interrupt));
  };
}

/** The child's approval request being answered: its JSON-RPC id and what kind of approval it asks. */
interface AskedApproval {
  id: RpcId;
  kind: ApprovalRequestKind;
}

function answerApproval(context: CodexTurnContext, { id, kind }: AskedApproval, answer: ApprovalAnswer, interrupt: () => void): void {
  const decision = toWireDecision(kind, answer);
  context.logger.info({ kind, answer: answer.decision, decision }, 'codex approval answered');
  context.connection.respond(id, { decision });
  if (interruptsTurn(kind, answer)) interrupt();
}

/** askUser that never throws and never outlives the signal: no way to ask is unanswered (a refusal), an abort is cancelled. */
async function askSafely(askUser: AskUser | undefined, question: ApprovalQuestion, signal: AbortSignal): Promise<ApprovalAnswer> {
  if (!askUser) return { decision: 'unanswered' };
  if (signal.aborted) return { decision: 'cancelled' };
  const aborted = new Promise<ApprovalAnswer>((resolve) => signal.addEventListener('abort', () => resolve({ decision: 'cancelled' }), { once: true }));
  try {
    return await Promise.race([askUser(question, signal), aborted]);
  } catch {
    return { decision: 'unanswered' };
  }
}

/**
 * Between turns nobody is asking the user: an approval is refused (fail
 * closed) and anything else gets -32601, so the child never waits on us.
 */
export function createIdleListener(connection: CodexConnection): (message: IncomingMessage) => void {
  return (message) => {
    if (message.kind !== 'request') return;
    const kind = approvalKindOf(message.method);
    if (kind) connection.respond(message.id, { decision: toWireDecision(kind, { decision: 'unanswered' }) });
    else connection.respondError(message.id, rpcCodes.methodNotFound, `${message.method} is not supported by this client`);
  };
}
