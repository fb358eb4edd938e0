import type { Logger } from 'pino';
import type { RunTurnRequest, RunTurnResult, RuntimeIds } from '../agent-runtime.ts';
import { spawnCodexConnection, type CodexConnection } from './codex-connection.ts';
import type { CodexConversationOptions, CodexPool, CodexPoolOptions } from './codex-options.ts';
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
  lastUsedAt: number;
  idleTimer?: NodeJS.Timeout;
}

const clientInfo = { name: 'switchboard', title: 'Switchboard chat gateway', version: '0.1.0' };

/**
 * Codex app-server children for one worker (docs/codex.md, "The pool"): one
 * per active conversation, reused between its turns, closed after `idleMs`
 * without a turn, at most `maxChildren`. A child that died is dropped and the
 * conversation's next turn spawns a fresh one.
 */
export function createCodexPool(options: CodexPoolOptions): CodexPool {
  const children = new Map<number, PooledChild>();
  const logger = options.logger;
  const closeGraceMs = options.closeGraceMs ?? 2000;
  const retry = options.overloadRetry ?? defaultOverloadRetry;
  const argv = splitCommandLine(options.command);
  let closing = false;

  const discard = (child: PooledChild): Promise<void> => {
    clearTimeout(child.idleTimer);
    if (children.get(child.conversationId) === child) children.delete(child.conversationId);
    return child.connection.close(closeGraceMs);
  };

  /** A child for the conversation: its live one, or a new one (after closing the least recently used idle child at the cap). */
  const childFor = async (conversationId: number): Promise<PooledChild | { failure: RunTurnResult }> => {
    const existing = children.get(conversationId);
    if (existing?.connection.isOpen) return existing;
    if (existing) await discard(existing);
    if (!argv) return { failure: failed('RUNTIME_CRASHED', 'CODEX_COMMAND is empty or has an unterminated quote') };
    if (children.size >= options.maxChildren) {
      const idle = [...children.values()].filter((child) => !child.busy).sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
      if (!idle) {
        return { failure: failed('MODEL_RATE_LIMITED', `this worker's Codex capacity is full (${options.maxChildren} children busy); try again shortly`) };
      }
      logger.info({ conversationId: idle.conversationId }, 'codex pool at its cap: closing the least recently used idle child');
      void discard(idle);
    }
    const child = spawnChild(conversationId, argv, options, logger, retry);
    children.set(conversationId, child);
    // A child that dies between turns leaves the pool at once, so `size` counts live children.
    void child.connection.closed.then(() => {
      if (!child.busy && children.get(conversationId) === child) void discard(child);
    });
    return child;
  };

  const runTurn = async (conversationId: number, conversation: CodexConversationOptions, request: RunTurnRequest): Promise<RunTurnResult> => {
    if (closing) return failed('RUNTIME_CRASHED', 'the Codex pool is closed (the worker is stopping)', request.runtimeIds);
    if (request.signal.aborted) return interrupted(request.runtimeIds);
    const found = await childFor(conversationId);
    if ('failure' in found) return { ...found.failure, ...(request.runtimeIds ? { runtimeIds: request.runtimeIds } : {}) };
    const child = found;
    if (child.busy) return failed('MODEL_FAILED', 'a Codex turn is already running for this conversation', request.runtimeIds);
    child.busy = true;
    clearTimeout(child.idleTimer);
    try {
      const ready = await readyUnlessAborted(child.ready, request.signal);
      if (ready === 'aborted') {
        // A child still not through `initialize` when the turn is stopped may be stuck: not kept for the next turn.
        if (!child.initialized) void discard(child);
        return interrupted(request.runtimeIds);
      }
      if (!ready) {
        const reason = await child.connection.closed;
        return failed('RUNTIME_CRASHED', `the Codex app-server could not be started (${reason})`, request.runtimeIds);
      }
      const context = { connection: child.connection, conversation, loadedThreads: child.loadedThreads, logger, retry };
      return await runCodexTurn({ ...context, interruptTimeoutMs: options.interruptTimeoutMs ?? 5000, closeGraceMs }, request);
    } finally {
      child.busy = false;
      child.lastUsedAt = Date.now();
      if (!child.connection.isOpen) void discard(child);
      else scheduleIdleClose(child);
    }
  };

  const scheduleIdleClose = (child: PooledChild): void => {
    child.idleTimer = setTimeout(() => {
      if (child.busy) return;
      logger.info({ conversationId: child.conversationId, idleMs: options.idleMs }, 'codex child idle: closing it');
      void discard(child);
    }, options.idleMs);
    // An idle child must not keep the worker process alive on its own.
    child.idleTimer.unref();
  };

  return {
    runtimeFor: (conversationId, conversation) => ({
      fixedRequestText: '',
      runTurn: (request) => runTurn(conversationId, conversation, request),
    }),
    async close() {
      closing = true;
      await Promise.all([...children.values()].map(discard));
    },
    get size() {
      return children.size;
    },
  };
}

function spawnChild(conversationId: number, argv: string[], options: CodexPoolOptions, logger: Logger, retry: OverloadRetry): PooledChild {
  const childLogger = logger.child({ conversationId });
  const connection = spawnCodexConnection({ argv, env: options.env ?? process.env, logger: childLogger });
  connection.setListener(createIdleListener(connection));
  void connection.closed.then((reason) => childLogger.info({ pid: connection.pid, reason }, 'codex child closed'));
  childLogger.info({ pid: connection.pid }, 'codex child started');
  const ready = requestWithRetry(connection, 'initialize', { clientInfo }, retry).then((outcome) => {
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

/** The handshake's outcome, or 'aborted' as soon as the turn's signal is. */
function readyUnlessAborted(ready: Promise<boolean>, signal: AbortSignal): Promise<boolean | 'aborted'> {
  if (signal.aborted) return Promise.resolve('aborted');
  return new Promise((resolve) => {
    const onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    void ready.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}

/** A turn that never reached Codex; the thread id the caller kept is handed back so the next turn still resumes it. */
function failed(code: 'RUNTIME_CRASHED' | 'MODEL_RATE_LIMITED' | 'MODEL_FAILED', message: string, runtimeIds?: RuntimeIds): RunTurnResult {
  return { outcome: 'failed', failure: { code, message }, entries: [], toolIterations: 0, ...(runtimeIds ? { runtimeIds } : {}) };
}
