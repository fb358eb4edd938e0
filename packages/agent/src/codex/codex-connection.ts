import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from 'pino';
import { envelopeSchema, type RpcEnvelope, type RpcError, type RpcId } from './codex-protocol.ts';

/**
 * One `codex app-server` child and the JSON-RPC spoken with it: one JSON
 * object per line on stdin/stdout. Written by hand on node:readline rather
 * than with a JSON-RPC library: the framing is a newline, Codex omits the
 * `jsonrpc` field that strict libraries require, and the child sends requests
 * of its own (approvals) that we must answer on the same pipe. A library would
 * add more adapting than the ~150 lines it saves.
 */

export type RpcOutcome = { kind: 'result'; result: unknown } | { kind: 'error'; error: RpcError } | { kind: 'closed' };

/** What the child sends us unasked: notifications, and requests we must answer. */
export type IncomingMessage =
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'request'; id: RpcId; method: string; params: unknown };

export interface CodexConnection {
  readonly pid: number | undefined;
  /** False once the child exited, its stdout closed or it could not be started. */
  readonly isOpen: boolean;
  /** Resolves once, with a short reason, when the connection is no longer usable. */
  readonly closed: Promise<string>;
  request(method: string, params?: unknown): Promise<RpcOutcome>;
  notify(method: string, params?: unknown): void;
  respond(id: RpcId, result: unknown): void;
  respondError(id: RpcId, code: number, message: string): void;
  /** Where notifications and server requests go; one listener at a time (the running turn, or the idle handler). */
  setListener(listener: (message: IncomingMessage) => void): void;
  /** Ends the child: stdin closed and SIGTERM, then SIGKILL after `graceMs`. Resolves when it has exited. */
  close(graceMs: number): Promise<void>;
}

export interface SpawnCodexOptions {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  logger: Logger;
}

export function spawnCodexConnection(options: SpawnCodexOptions): CodexConnection {
  const [file, ...args] = options.argv;
  // fd 3: the lifeline of a sandboxed child's guard (codex-sandbox-guard.ts), which ends the sandbox when our end
  // closes, as it does when this process dies, however. An unconfined child just has one unused descriptor more.
  const child: CodexChild = spawn(file as string, args, { env: options.env, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
  const state: ConnectionState = { pending: new Map(), listener: () => {}, open: true, nextId: 1 };
  // Before the readers: the exit and stdout-close handlers run first, as they always have.
  const lifecycle = watchLifecycle(child, state);
  readChildOutput(child, state, options.logger);

  const send = (message: object): void => {
    if (!state.open || !child.stdin.writable) return;
    child.stdin.write(`${JSON.stringify(message)}\n`);
  };

  return {
    get pid() {
      return child.pid;
    },
    get isOpen() {
      return state.open;
    },
    closed: lifecycle.closed,
    request(method, params) {
      if (!state.open) return Promise.resolve({ kind: 'closed' });
      const id = state.nextId++;
      const outcome = new Promise<RpcOutcome>((resolve) => state.pending.set(String(id), resolve));
      send(params === undefined ? { id, method } : { id, method, params });
      return outcome;
    },
    notify: (method, params) => send(params === undefined ? { method } : { method, params }),
    respond: (id, result) => send({ id, result }),
    respondError: (id, code, message) => send({ id, error: { code, message } }),
    setListener(next) {
      state.listener = next;
    },
    close: (graceMs) => closeChild(child, lifecycle, graceMs),
  };
}

type CodexChild = ChildProcessByStdio<Writable, Readable, Readable>;

/** What the connection's parts share: the open flag, the requests awaiting an answer and the listener. */
interface ConnectionState {
  /** Settles each request still waiting, by its id as a string. */
  readonly pending: Map<string, (outcome: RpcOutcome) => void>;
  listener: (message: IncomingMessage) => void;
  open: boolean;
  nextId: number;
}

interface ChildLifecycle {
  /** Resolves once, with the reason, when the connection is no longer usable. */
  closed: Promise<string>;
  /** Resolves when the process has exited, or at once if it never started. */
  exited: Promise<void>;
  /** Marks the connection unusable (once) and settles every waiting request `closed`. */
  markClosed(reason: string): void;
}

/** Whichever comes first of exit, a failed start and stdout closing makes the connection unusable. */
function watchLifecycle(child: CodexChild, state: ConnectionState): ChildLifecycle {
  let markClosed: (reason: string) => void = () => {};
  const closed = new Promise<string>((resolve) => {
    markClosed = (reason) => {
      if (!state.open) return;
      state.open = false;
      for (const settle of state.pending.values()) settle({ kind: 'closed' });
      state.pending.clear();
      resolve(reason);
    };
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      markClosed(signal ? `killed by ${signal}` : `exited with code ${code}`);
      // Our end of the guard's lifeline: nothing is left to guard.
      child.stdio[3]?.destroy();
      resolve();
    });
    // A command that cannot be started emits 'error' and never 'exit'.
    child.once('error', (error: NodeJS.ErrnoException) => {
      markClosed(`could not start: ${error.code ?? error.message}`);
      if (child.pid === undefined) resolve();
    });
  });
  // A write to a child that just died fails with EPIPE; the exit handler reports it.
  child.stdin.on('error', () => {});
  child.stdout.once('close', () => markClosed('its stdout closed'));
  return { closed, exited, markClosed };
}

/** stdout lines go to the waiting request or the listener; stderr lines only to the debug log. */
function readChildOutput(child: CodexChild, state: ConnectionState, logger: Logger): void {
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    const message = readLine(line, logger);
    if (message) routeMessage(message, state);
  });
  createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (line) => {
    logger.debug({ stderr: line.slice(0, 500) }, 'codex app-server stderr');
  });
}

/** A request or notification from the child goes to the listener; an answer settles the request it answers. */
function routeMessage(message: RpcEnvelope, state: ConnectionState): void {
  if (message.method !== undefined && message.id !== undefined && message.id !== null) {
    state.listener({ kind: 'request', id: message.id, method: message.method, params: message.params });
  } else if (message.method !== undefined) {
    state.listener({ kind: 'notification', method: message.method, params: message.params });
  } else if (message.id !== undefined && message.id !== null) {
    const settle = state.pending.get(String(message.id));
    state.pending.delete(String(message.id));
    settle?.(message.error ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result });
  }
}

/** Ends the child politely (stdin closed, SIGTERM), then SIGKILL after `graceMs`; resolves when it has exited. */
async function closeChild(child: CodexChild, lifecycle: ChildLifecycle, graceMs: number): Promise<void> {
  // Unusable from now on, also while it takes its time to exit: the pool
  // must never hand a closing child the next turn.
  lifecycle.markClosed('closed by the pool');
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return lifecycle.exited;
  child.stdin.end();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await lifecycle.exited;
  clearTimeout(timer);
}

/** One line as a JSON-RPC envelope, or undefined for noise (never a throw: a bad line is logged and skipped). */
function readLine(line: string, logger: Logger): RpcEnvelope | undefined {
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    logger.warn({ line: line.slice(0, 200) }, 'codex app-server wrote a line that is not JSON; skipped');
    return undefined;
  }
  const parsed = envelopeSchema.safeParse(value);
  if (!parsed.success) {
    logger.warn({ line: line.slice(0, 200) }, 'codex app-server wrote a message that is not JSON-RPC; skipped');
    return undefined;
  }
  return parsed.data;
}
