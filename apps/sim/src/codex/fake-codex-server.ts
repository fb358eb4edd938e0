import { randomUUID } from 'node:crypto';
import { runFakeScript, type ClientAnswer, type FakeTurnContext, type FakeTurnEnd } from './fake-codex-scripts.ts';
import type { FakeThreadStore } from './fake-codex-threads.ts';

/**
 * A fake `codex app-server`: JSON-RPC, one object per line, without the
 * `jsonrpc` field, like Codex. It never crashes on bad input: a line that is
 * not JSON is logged and skipped, an unknown method gets -32601.
 */
export interface FakeCodexIo {
  /** Writes one line to stdout. */
  write(line: string): void;
  /**
   * Every message received, for FAKE_CODEX_LOG. An answer to one of our own
   * requests comes with `answering`: that request's method and what it asked
   * about (the command, the item), so a log reader can tell which question a
   * decision answers (the answer itself carries only the request's id).
   */
  record(message: unknown, answering?: AnsweredRequest): void;
  exit(code: number): void;
}

type Id = string | number;

/** What one of our requests to the client was about, logged beside the client's answer. */
export interface AnsweredRequest {
  method: string;
  command?: unknown;
  itemId?: unknown;
}

interface Incoming {
  id?: Id | null;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: { code?: number; message?: string };
}

interface ActiveTurn {
  turnId: string;
  abort: AbortController;
  /** `hang-deaf`: turn/interrupt is answered but ignored, like a child that is stuck. */
  deaf: boolean;
  /** turn/start's approvalPolicy: `never` runs commands without asking, like Codex. */
  approvalPolicy: unknown;
}

/** A thread this process has started or resumed. */
interface LoadedThread {
  cwd: string;
  /** Commands approved "for session" on this thread: not asked again. */
  sessionApproved: Set<string>;
  /**
   * `developerInstructions` as the thread was loaded with (start, or a resume
   * that loaded it): like Codex, a resume of a thread already loaded keeps the
   * old ones. Never part of the turn's `userMessage` item.
   */
  developerInstructions: string;
}

export interface FakeCodexOptions {
  /** Reads `initialize` but never answers it, like a child stuck in its handshake (FAKE_CODEX_SILENT_INIT=1). */
  silentInit?: boolean;
}

/** One fake process's state, shared by its handlers. */
interface FakeServer {
  readonly io: FakeCodexIo;
  readonly threads: FakeThreadStore;
  readonly options: FakeCodexOptions;
  initialized: boolean;
  nextServerId: number;
  /** Our own requests to the client, by id as a string, until it answers. */
  readonly awaitingClient: Map<string, { resolve: (answer: ClientAnswer) => void; about: AnsweredRequest }>;
  readonly loaded: Map<string, LoadedThread>;
  /** The running turn of each thread. */
  readonly active: Map<string, ActiveTurn>;
  /** Threads whose `overloaded` turn was already refused once. */
  readonly overloadedOnce: Set<string>;
}

type Handler = (fake: FakeServer, id: Id, params: Record<string, unknown>) => void;

const codes = { invalidRequest: -32600, methodNotFound: -32601, parseError: -32700, overloaded: -32001 };

export function createFakeCodexServer(io: FakeCodexIo, threads: FakeThreadStore, options: FakeCodexOptions = {}): { receive(line: string): void } {
  const fake: FakeServer = {
    io,
    threads,
    options,
    initialized: false,
    nextServerId: 1,
    awaitingClient: new Map(),
    loaded: new Map(),
    active: new Map(),
    overloadedOnce: new Set(),
  };
  return { receive: (line) => receiveLine(fake, line) };
}

const send = (fake: FakeServer, message: object) => fake.io.write(JSON.stringify(message));
const reply = (fake: FakeServer, id: Id, result: unknown) => send(fake, { id, result });
const fail = (fake: FakeServer, id: Id, code: number, message: string) => send(fake, { id, error: { code, message } });
const notify = (fake: FakeServer, method: string, params: Record<string, unknown>) => send(fake, { method, params });

/** One line from the client: a request, a notification, or an answer to one of our requests. */
function receiveLine(fake: FakeServer, line: string): void {
  if (line.trim() === '') return;
  let message: Incoming;
  try {
    message = JSON.parse(line) as Incoming;
  } catch {
    fake.io.record({ unparsable: line });
    return send(fake, { id: null, error: { code: codes.parseError, message: 'Parse error' } });
  }
  const isObject = typeof message === 'object' && message !== null;
  const hasId = isObject && message.id !== undefined && message.id !== null;
  const awaited = hasId && typeof message.method !== 'string' ? fake.awaitingClient.get(String(message.id)) : undefined;
  fake.io.record(message, awaited?.about);
  if (!isObject) return;
  const params = (typeof message.params === 'object' && message.params !== null ? message.params : {}) as Record<string, unknown>;
  if (typeof message.method === 'string' && hasId) return answerRequest(fake, message.id as Id, message.method, params);
  if (typeof message.method === 'string') return; // notifications (`initialized`) need no answer
  if (awaited) {
    fake.awaitingClient.delete(String(message.id));
    awaited.resolve({ result: message.result, ...(message.error ? { error: message.error } : {}) });
  }
}

/** Like Codex: `initialize` first and once, then the handlers; -32601 for a method it does not serve. */
function answerRequest(fake: FakeServer, id: Id, method: string, params: Record<string, unknown>): void {
  if (method === 'initialize') return answerInitialize(fake, id);
  if (!fake.initialized) return fail(fake, id, codes.invalidRequest, 'Not initialized');
  const handler = Object.hasOwn(handlers, method) ? handlers[method] : undefined;
  if (!handler) return fail(fake, id, codes.methodNotFound, `unknown method ${method}`);
  handler(fake, id, params);
}

function answerInitialize(fake: FakeServer, id: Id): void {
  // The runtime's tests need a child that hangs in its handshake; the request is still logged.
  if (fake.options.silentInit) return;
  if (fake.initialized) return fail(fake, id, codes.invalidRequest, 'Already initialized');
  fake.initialized = true;
  reply(fake, id, { userAgent: 'fake-codex/0.1.0', codexHome: '/nonexistent/fake-codex-home', platformFamily: 'unix', platformOs: process.platform });
}

const startThread: Handler = (fake, id, params) => {
  const cwd = typeof params.cwd === 'string' ? params.cwd : process.cwd();
  const threadId = fake.threads.create(cwd);
  fake.loaded.set(threadId, { cwd, sessionApproved: new Set(), developerInstructions: instructionsOf(params) });
  const thread = { id: threadId, preview: '', modelProvider: 'fake', createdAt: Math.floor(Date.now() / 1000), status: { type: 'idle' } };
  reply(fake, id, { thread, model: 'fake-codex', cwd, approvalPolicy: params.approvalPolicy ?? null, sandbox: params.sandbox ?? null });
  notify(fake, 'thread/started', { thread });
};

const resumeThread: Handler = (fake, id, params) => {
  const threadId = typeof params.threadId === 'string' ? params.threadId : '';
  if (!fake.loaded.has(threadId) && !fake.threads.exists(threadId)) return fail(fake, id, codes.invalidRequest, `no thread ${threadId}`);
  const cwd = typeof params.cwd === 'string' ? params.cwd : process.cwd();
  if (!fake.loaded.has(threadId)) fake.loaded.set(threadId, { cwd, sessionApproved: new Set(), developerInstructions: instructionsOf(params) });
  const answer = () => reply(fake, id, { thread: { id: threadId, preview: '', modelProvider: 'fake', status: { type: 'idle' } }, model: 'fake-codex' });
  // `delay-resume: <ms>` (an earlier turn's script): a Codex slow to load the thread, so a stop can land while the client waits.
  const delayMs = fake.threads.takeResumeDelay(threadId);
  if (delayMs > 0) setTimeout(answer, delayMs);
  else answer();
};

const startTurn: Handler = (fake, id, params) => {
  const threadId = typeof params.threadId === 'string' ? params.threadId : '';
  if (!fake.loaded.has(threadId)) return fail(fake, id, codes.invalidRequest, `thread ${threadId} is not loaded`);
  if (fake.active.has(threadId)) return fail(fake, id, codes.invalidRequest, 'a turn is already running on this thread');
  const text = textOf(params.input);
  const last = (text.trim().split('\n').pop() ?? '').trim();
  if (last === 'overloaded-always' || (last === 'overloaded' && !fake.overloadedOnce.has(threadId))) {
    fake.overloadedOnce.add(threadId);
    return fail(fake, id, codes.overloaded, 'Server overloaded; retry later.');
  }
  // `delay-start: <ms>`: turn/start answered (and the turn begun) only after ms, so a stop can land while the client waits.
  const delayMs = /^delay-start:\s*(\d+)$/.exec(last)?.[1];
  const start = { id, threadId, text, approvalPolicy: params.approvalPolicy };
  if (delayMs) setTimeout(() => beginTurn(fake, start), Number(delayMs));
  else beginTurn(fake, start);
};

function beginTurn(fake: FakeServer, start: { id: Id; threadId: string; text: string; approvalPolicy: unknown }): void {
  const { id, threadId, text } = start;
  const last = (text.trim().split('\n').pop() ?? '').trim();
  const turn: ActiveTurn = { turnId: `turn_${randomUUID().slice(0, 8)}`, abort: new AbortController(), deaf: last === 'hang-deaf', approvalPolicy: start.approvalPolicy };
  fake.active.set(threadId, turn);
  reply(fake, id, { turn: { id: turn.turnId, status: 'inProgress', items: [], error: null } });
  void runTurn(fake, threadId, turn, text);
}

const interruptTurn: Handler = (fake, id, params) => {
  const turn = fake.active.get(typeof params.threadId === 'string' ? params.threadId : '');
  if (!turn || turn.turnId !== params.turnId) return fail(fake, id, codes.invalidRequest, 'no such running turn');
  reply(fake, id, {});
  if (!turn.deaf) turn.abort.abort();
};

const handlers: Record<string, Handler> = {
  'thread/start': startThread,
  'thread/resume': resumeThread,
  'turn/start': startTurn,
  'turn/interrupt': interruptTurn,
};

/** A turn as Codex sends it: started, the user's item, the script's items, token usage, completed. */
async function runTurn(fake: FakeServer, threadId: string, turn: ActiveTurn, text: string): Promise<void> {
  const { turnId, abort } = turn;
  const thread = fake.loaded.get(threadId) as LoadedThread;
  notify(fake, 'turn/started', { threadId, turn: { id: turnId, items: [], status: 'inProgress', error: null } });
  const userItem = { type: 'userMessage', id: `item_${randomUUID().slice(0, 8)}`, content: [{ type: 'text', text }] };
  notify(fake, 'item/started', { threadId, turnId, item: userItem, startedAtMs: Date.now() });
  notify(fake, 'item/completed', { threadId, turnId, item: userItem, completedAtMs: Date.now() });
  const context: FakeTurnContext = {
    threadId,
    turnId,
    cwd: thread.cwd,
    signal: abort.signal,
    sessionApproved: thread.sessionApproved,
    developerInstructions: thread.developerInstructions,
    neverAsk: turn.approvalPolicy === 'never',
    notify: (method, params) => notify(fake, method, params),
    request: (method, params) => requestClient(fake, method, params, abort.signal),
    delayNextResume: (ms) => fake.threads.delayNextResume(threadId, ms),
    exit: fake.io.exit,
  };
  const end = await runScriptSafely(context, text);
  finishTurn(fake, threadId, turnId, abort.signal.aborted ? { status: 'interrupted' } : end);
}

/** The script's end; a script that throws fails the turn instead of the fake. */
async function runScriptSafely(context: FakeTurnContext, text: string): Promise<FakeTurnEnd> {
  try {
    return await runFakeScript(context, text);
  } catch (error) {
    return { status: 'failed', message: `the fake's script threw: ${String(error)}` };
  }
}

function finishTurn(fake: FakeServer, threadId: string, turnId: string, end: FakeTurnEnd): void {
  fake.active.delete(threadId);
  fake.threads.countTurn(threadId);
  notify(fake, 'thread/tokenUsage/updated', { threadId, turnId, tokenUsage: { total: { totalTokens: 42 }, last: { totalTokens: 42 } } });
  const error = end.status === 'failed' ? { message: end.message } : null;
  notify(fake, 'turn/completed', { threadId, turn: { id: turnId, items: [], status: end.status, error } });
}

/** A request to the client: its answer, or 'aborted' as soon as the turn is interrupted. */
function requestClient(fake: FakeServer, method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<ClientAnswer | 'aborted'> {
  const id = fake.nextServerId++;
  const about = { method, command: params.command, itemId: params.itemId ?? params.callId };
  const answered = new Promise<ClientAnswer>((resolve) => fake.awaitingClient.set(String(id), { resolve, about }));
  send(fake, { id, method, params });
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal.aborted) resolve('aborted');
    signal.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  return Promise.race([answered, aborted]);
}

const instructionsOf = (params: Record<string, unknown>) => (typeof params.developerInstructions === 'string' ? params.developerInstructions : '');

/** The text of a turn's input items, joined. */
function textOf(input: unknown): string {
  if (!Array.isArray(input)) return '';
  return input
    .map((item) => (typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'text' ? String((item as { text?: unknown }).text ?? '') : ''))
    .filter(Boolean)
    .join('\n');
}

