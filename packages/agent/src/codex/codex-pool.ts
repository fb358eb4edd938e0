import type { Logger } from 'pino';
import type { RunTurnRequest, RunTurnResult, RuntimeIds } from '../agent-runtime.ts';
import { pickAllowedEnv } from './codex-child-env.ts';
import { spawnCodexConnection, type CodexConnection } from './codex-connection.ts';
import type { ChildEnvOutcome, CodexConversationOptions, CodexPool, CodexPoolOptions } from './codex-options.ts';
import { defaultOverloadRetry, requestWithRetry, type OverloadRetry } from './codex-request-retry.ts';
import { createIdleListener, runCodexTurn } from './codex-turn.ts';
import { splitCommandLine } from './split-command.ts';

/** One live child, serving one conversation. */
interface PooledChild {
  conversationId: number;
  connection: CodexConnection;
  /** The `initialize` handshake: true once the child may take requests. */
  ready: Promise<boolean>;
  /** The handshake succeeded. */
  initialized: boolean;
  loadedThreads: Set<string>;
  busy: boolean;
  /** The user whose turn holds the child while it is busy (RunTurnRequest.userKey). */
  heldBy?: string;
  lastUsedAt: number;
  idleTimer?: NodeJS.Timeout;
}

const clientInfo = { name: 'switchboard', title: 'Switchboard chat gateway', version: '0.1.0' };

/** What the pool's steps share: its options with their defaults filled in, and its children. */
interface PoolState {
  readonly options: CodexPoolOptions;
  readonly logger: Logger;
  readonly closeGraceMs: number;
  readonly retry: OverloadRetry;
  /** The command split into argv; null when CODEX_COMMAND cannot be split. */
  readonly argv: string[] | null;
  readonly children: Map<number, PooledChild>;
  /** Per conversation, settles when its turns so far have ended: the next one waits for it. */
  readonly lastTurn: Map<number, Promise<void>>;
  closing: boolean;
}

/** A child to run the turn on, or why there is none (already a turn's result). */
type AcquiredChild = PooledChild | { failure: RunTurnResult };

/**
 * Codex app-server children for one worker (docs/codex.md, "The pool"): one
 * per active conversation, reused between its turns, closed after `idleMs`
 * without a turn, at most `maxChildren`. A child that died is dropped and the
 * conversation's next turn spawns a fresh one.
 */
export function createCodexPool(options: CodexPoolOptions): CodexPool {
  const pool: PoolState = {
    options,
    logger: options.logger,
    closeGraceMs: options.closeGraceMs ?? 2000,
    retry: options.overloadRetry ?? defaultOverloadRetry,
    argv: splitCommandLine(options.command),
    children: new Map(),
    lastTurn: new Map(),
    closing: false,
  };
  return {
    runtimeFor: (conversationId, conversation) => ({
      fixedRequestText: '',
      runTurn: (request) => runAfterLastTurn(pool, conversationId, request, () => runPooledTurn(pool, conversationId, conversation, request)),
    }),
    async close() {
      pool.closing = true;
      await Promise.all([...pool.children.values()].map((child) => discardChild(pool, child)));
    },
    get size() {
      return pool.children.size;
    },
  };
}

/**
 * One turn of a conversation at a time. A new holding of the conversation (the
 * old one lost its lease) can start a turn while the old one's child is still
 * finishing its interrupt (up to `interruptTimeoutMs`): it waits for that turn
 * to end, or for its own stop, instead of failing and consuming the message
 * (issue 29, defect 8).
 */
async function runAfterLastTurn(pool: PoolState, conversationId: number, request: RunTurnRequest, run: () => Promise<RunTurnResult>): Promise<RunTurnResult> {
  const previous = pool.lastTurn.get(conversationId);
  const turn = (async () => {
    if (previous && (await settledUnlessAborted(previous, request.signal)) === 'aborted') return interrupted(request.runtimeIds);
    return run();
  })();
  // The next turn waits for this one and, if this one gave up waiting, for the one before it too.
  const done = Promise.all([previous, turn]).then(
    () => {},
    () => {},
  );
  pool.lastTurn.set(conversationId, done);
  void done.then(() => {
    if (pool.lastTurn.get(conversationId) === done) pool.lastTurn.delete(conversationId);
  });
  return turn;
}

/** One turn: refused early when the pool is closing or the turn is already stopped, else run on the conversation's child. */
async function runPooledTurn(pool: PoolState, conversationId: number, conversation: CodexConversationOptions, request: RunTurnRequest): Promise<RunTurnResult> {
  if (pool.closing) return failed('RUNTIME_CRASHED', 'the Codex pool is closed (the worker is stopping)', request.runtimeIds);
  if (request.signal.aborted) return interrupted(request.runtimeIds);
  const overUser = refuseOverUserCap(pool, conversationId, request.userKey);
  if (overUser) return { ...overUser, ...(request.runtimeIds ? { runtimeIds: request.runtimeIds } : {}) };
  const carriesNotes = request.notes.length > 0;
  if (carriesNotes) await discardIdleChild(pool, conversationId);
  const found = await acquireChild(pool, conversationId);
  if ('failure' in found) return { ...found.failure, ...(request.runtimeIds ? { runtimeIds: request.runtimeIds } : {}) };
  const child = found;
  if (child.busy) return failed('MODEL_FAILED', 'a Codex turn is already running for this conversation', request.runtimeIds);
  child.busy = true;
  child.heldBy = request.userKey;
  clearTimeout(child.idleTimer);
  try {
    return await runOnChild(pool, child, conversation, request);
  } finally {
    child.heldBy = undefined;
    releaseChild(pool, child, carriesNotes);
  }
}

/**
 * One user's turns hold at most `maxChildrenPerUser` children of this worker
 * (issue 30, finding 8): a question waiting for its answer holds a child for
 * minutes, and one user must not take every child from the others. Refused
 * like a full pool: retryable, the user is asked to try again shortly.
 */
function refuseOverUserCap(pool: PoolState, conversationId: number, userKey: string | undefined): RunTurnResult | undefined {
  const cap = pool.options.maxChildrenPerUser;
  if (userKey === undefined || cap === undefined) return undefined;
  let held = 0;
  for (const child of pool.children.values()) if (child.busy && child.heldBy === userKey && child.conversationId !== conversationId) held += 1;
  if (held < cap) return undefined;
  pool.logger.info({ conversationId, held, cap }, 'codex: this user already holds CODEX_MAX_CHILDREN_PER_USER children on this worker; the turn is refused, retryable');
  return failed('MODEL_RATE_LIMITED', `this user's Codex turns already hold ${held} of this worker's children (CODEX_MAX_CHILDREN_PER_USER); try again shortly`);
}

/**
 * A turn with API-only notes sends them as `developerInstructions` of
 * `thread/resume` (or `thread/start`), which Codex applies only when it loads
 * the thread: a child that already has it loaded keeps its old instructions.
 * So such a turn runs on a fresh child, and that child is closed after it
 * (`releaseChild`), or the note would stay in the thread's instructions for
 * the turns after it (issue 29, defect 7). Notes are rare: after a restart or
 * an interrupted tool call.
 */
async function discardIdleChild(pool: PoolState, conversationId: number): Promise<void> {
  const existing = pool.children.get(conversationId);
  if (existing && !existing.busy) await discardChild(pool, existing);
}

/** The turn on a child the caller marked busy: waits for its handshake (or the abort), then runs the turn. */
async function runOnChild(pool: PoolState, child: PooledChild, conversation: CodexConversationOptions, request: RunTurnRequest): Promise<RunTurnResult> {
  const ready = await settledUnlessAborted(child.ready, request.signal);
  if (ready === 'aborted') {
    // A child still not through `initialize` when the turn is stopped may be stuck: not kept for the next turn.
    if (!child.initialized) void discardChild(pool, child);
    return interrupted(request.runtimeIds);
  }
  if (!ready) {
    const reason = await child.connection.closed;
    return failed('RUNTIME_CRASHED', `the Codex app-server could not be started (${reason})`, request.runtimeIds);
  }
  const { logger, retry, closeGraceMs } = pool;
  const context = { connection: child.connection, conversation, loadedThreads: child.loadedThreads, logger, retry };
  return await runCodexTurn({ ...context, interruptTimeoutMs: pool.options.interruptTimeoutMs ?? 5000, closeGraceMs }, request);
}

/**
 * After a turn: a child that closed leaves the pool, and so does one whose
 * thread holds this turn's notes in its instructions (`discardIdleChild`); a
 * live one waits for the next turn until `idleMs`.
 */
function releaseChild(pool: PoolState, child: PooledChild, carriedNotes: boolean): void {
  child.busy = false;
  child.lastUsedAt = Date.now();
  if (!child.connection.isOpen || carriedNotes) void discardChild(pool, child);
  else scheduleIdleClose(pool, child);
}

/** A child for the conversation: its live one, or a new one (after closing the least recently used idle child at the cap). */
async function acquireChild(pool: PoolState, conversationId: number): Promise<AcquiredChild> {
  const existing = pool.children.get(conversationId);
  if (existing?.connection.isOpen) return existing;
  if (existing) await discardChild(pool, existing);
  if (!pool.argv) return { failure: failed('RUNTIME_CRASHED', 'CODEX_COMMAND is empty or has an unterminated quote') };
  // Prepared before the cap is checked, so that the check and the insert below stay in one synchronous step.
  const prepared = await prepareChildEnv(pool, conversationId, pool.argv);
  if (prepared.kind === 'failed') {
    pool.logger.error({ conversationId, reason: prepared.reason }, 'codex child environment could not be prepared');
    return { failure: failed('RUNTIME_CRASHED', `the Codex child's environment could not be prepared (${prepared.reason})`) };
  }
  if (pool.closing) return { failure: failed('RUNTIME_CRASHED', 'the Codex pool is closed (the worker is stopping)') };
  // Another turn of this conversation may have spawned its child while we prepared: that one is used (and found busy).
  const spawnedMeanwhile = pool.children.get(conversationId);
  if (spawnedMeanwhile?.connection.isOpen) return spawnedMeanwhile;
  const full = makeRoomAtCap(pool);
  if (full) return full;
  const child = spawnChild(pool, conversationId, { argv: prepared.argv ?? pool.argv, env: prepared.env });
  pool.children.set(conversationId, child);
  // A child that dies between turns leaves the pool at once, so `size` counts live children.
  void child.connection.closed.then(() => {
    if (!child.busy && pool.children.get(conversationId) === child) void discardChild(pool, child);
  });
  return child;
}

/** The child's environment (and command line): the caller's per-conversation one, a fixed one (tests), else the bare allow-list; never the worker's. */
async function prepareChildEnv(pool: PoolState, conversationId: number, argv: readonly string[]): Promise<ChildEnvOutcome> {
  const { childEnv, env } = pool.options;
  if (!childEnv) return { kind: 'ready', env: env ?? pickAllowedEnv(process.env) };
  try {
    return await childEnv(conversationId, argv);
  } catch (err) {
    return { kind: 'failed', reason: err instanceof Error ? err.message : String(err) };
  }
}

/** At the cap, closes the least recently used idle child; with every child busy, the retryable refusal. */
function makeRoomAtCap(pool: PoolState): { failure: RunTurnResult } | undefined {
  const { children, options, logger } = pool;
  if (children.size < options.maxChildren) return undefined;
  const idle = [...children.values()].filter((child) => !child.busy).sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
  if (!idle) {
    return { failure: failed('MODEL_RATE_LIMITED', `this worker's Codex capacity is full (${options.maxChildren} children busy); try again shortly`) };
  }
  logger.info({ conversationId: idle.conversationId }, 'codex pool at its cap: closing the least recently used idle child');
  void discardChild(pool, idle);
  return undefined;
}

/** Takes the child out of the pool (if it is still the conversation's) and closes it. */
function discardChild(pool: PoolState, child: PooledChild): Promise<void> {
  clearTimeout(child.idleTimer);
  if (pool.children.get(child.conversationId) === child) pool.children.delete(child.conversationId);
  return child.connection.close(pool.closeGraceMs);
}

function scheduleIdleClose(pool: PoolState, child: PooledChild): void {
  child.idleTimer = setTimeout(() => {
    if (child.busy) return;
    pool.logger.info({ conversationId: child.conversationId, idleMs: pool.options.idleMs }, 'codex child idle: closing it');
    void discardChild(pool, child);
  }, pool.options.idleMs);
  // An idle child must not keep the worker process alive on its own.
  child.idleTimer.unref();
}

/** The command line and environment one child is started with (prepareChildEnv's). */
interface ChildLaunch {
  argv: string[];
  env: CodexPoolOptions['env'];
}

function spawnChild(pool: PoolState, conversationId: number, launch: ChildLaunch): PooledChild {
  const { options, retry } = pool;
  const childLogger = pool.logger.child({ conversationId });
  const connection = spawnCodexConnection({ argv: launch.argv, env: launch.env ?? {}, logger: childLogger });
  connection.setListener(createIdleListener(connection));
  void connection.closed.then((reason) => childLogger.info({ pid: connection.pid, reason }, 'codex child closed'));
  childLogger.info({ pid: connection.pid }, 'codex child started');
  const ready = requestWithRetry(connection, 'initialize', { clientInfo }, { retry }).then((outcome) => {
    if (outcome.kind !== 'result') {
      childLogger.warn({ outcome: outcome.kind }, 'codex initialize failed; closing the child');
      void connection.close(options.closeGraceMs ?? 2000);
      return false;
    }
    connection.notify('initialized');
    child.initialized = true;
    return true;
  });
  const child: PooledChild = { conversationId, connection, ready, initialized: false, loadedThreads: new Set(), busy: false, lastUsedAt: Date.now() };
  return child;
}

function interrupted(runtimeIds: RuntimeIds | undefined): RunTurnResult {
  return { outcome: 'interrupted', entries: [], toolIterations: 0, ...(runtimeIds ? { runtimeIds } : {}) };
}

/** What the promise settles with, or 'aborted' as soon as the signal is. */
function settledUnlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | 'aborted'> {
  if (signal.aborted) return Promise.resolve('aborted');
  return new Promise((resolve) => {
    const onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}

/** A turn that never reached Codex; the thread id the caller kept is handed back so the next turn still resumes it. */
function failed(code: 'RUNTIME_CRASHED' | 'MODEL_RATE_LIMITED' | 'MODEL_FAILED', message: string, runtimeIds?: RuntimeIds): RunTurnResult {
  return { outcome: 'failed', failure: { code, message }, entries: [], toolIterations: 0, ...(runtimeIds ? { runtimeIds } : {}) };
}
