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
  /** Every message received, for FAKE_CODEX_LOG. */
  record(message: unknown): void;
  exit(code: number): void;
}

type Id = string | number;
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
}

const codes = { invalidRequest: -32600, methodNotFound: -32601, parseError: -32700, overloaded: -32001 };

export function createFakeCodexServer(io: FakeCodexIo, threads: FakeThreadStore): { receive(line: string): void } {
  let initialized = false;
  let nextServerId = 1;
  const awaitingClient = new Map<string, (answer: ClientAnswer) => void>();
  const loaded = new Map<string, { cwd: string; sessionApproved: Set<string> }>();
  const active = new Map<string, ActiveTurn>();
  const overloadedOnce = new Set<string>();

  const send = (message: object) => io.write(JSON.stringify(message));
  const reply = (id: Id, result: unknown) => send({ id, result });
  const fail = (id: Id, code: number, message: string) => send({ id, error: { code, message } });
  const notify = (method: string, params: Record<string, unknown>) => send({ method, params });

  const requestClient = (method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<ClientAnswer | 'aborted'> => {
    const id = nextServerId++;
    const answered = new Promise<ClientAnswer>((resolve) => awaitingClient.set(String(id), resolve));
    send({ id, method, params });
    const aborted = new Promise<'aborted'>((resolve) => {
      if (signal.aborted) resolve('aborted');
      signal.addEventListener('abort', () => resolve('aborted'), { once: true });
    });
    return Promise.race([answered, aborted]);
  };

  const runTurn = async (threadId: string, turnId: string, text: string, abort: AbortController) => {
    const thread = loaded.get(threadId) as { cwd: string; sessionApproved: Set<string> };
    notify('turn/started', { threadId, turn: { id: turnId, items: [], status: 'inProgress', error: null } });
    const userItem = { type: 'userMessage', id: `item_${randomUUID().slice(0, 8)}`, content: [{ type: 'text', text }] };
    notify('item/started', { threadId, turnId, item: userItem, startedAtMs: Date.now() });
    notify('item/completed', { threadId, turnId, item: userItem, completedAtMs: Date.now() });
    const context: FakeTurnContext = {
      threadId,
      turnId,
      cwd: thread.cwd,
      signal: abort.signal,
      sessionApproved: thread.sessionApproved,
      notify,
      request: (method, params) => requestClient(method, params, abort.signal),
      exit: io.exit,
    };
    let end: FakeTurnEnd;
    try {
      end = await runFakeScript(context, text);
    } catch (error) {
      end = { status: 'failed', message: `the fake's script threw: ${String(error)}` };
    }
    if (abort.signal.aborted) end = { status: 'interrupted' };
    active.delete(threadId);
    threads.countTurn(threadId);
    notify('thread/tokenUsage/updated', { threadId, turnId, tokenUsage: { total: { totalTokens: 42 }, last: { totalTokens: 42 } } });
    const error = end.status === 'failed' ? { message: end.message } : null;
    notify('turn/completed', { threadId, turn: { id: turnId, items: [], status: end.status, error } });
  };

  const handlers: Record<string, (id: Id, params: Record<string, unknown>) => void> = {
    'thread/start': (id, params) => {
      const cwd = typeof params.cwd === 'string' ? params.cwd : process.cwd();
      const threadId = threads.create(cwd);
      loaded.set(threadId, { cwd, sessionApproved: new Set() });
      const thread = { id: threadId, preview: '', modelProvider: 'fake', createdAt: Math.floor(Date.now() / 1000), status: { type: 'idle' } };
      reply(id, { thread, model: 'fake-codex', cwd, approvalPolicy: params.approvalPolicy ?? null, sandbox: params.sandbox ?? null });
      notify('thread/started', { thread });
    },
    'thread/resume': (id, params) => {
      const threadId = typeof params.threadId === 'string' ? params.threadId : '';
      if (!loaded.has(threadId) && !threads.exists(threadId)) return fail(id, codes.invalidRequest, `no thread ${threadId}`);
      const cwd = typeof params.cwd === 'string' ? params.cwd : process.cwd();
      if (!loaded.has(threadId)) loaded.set(threadId, { cwd, sessionApproved: new Set() });
      reply(id, { thread: { id: threadId, preview: '', modelProvider: 'fake', status: { type: 'idle' } }, model: 'fake-codex' });
    },
    'turn/start': (id, params) => {
      const threadId = typeof params.threadId === 'string' ? params.threadId : '';
      if (!loaded.has(threadId)) return fail(id, codes.invalidRequest, `thread ${threadId} is not loaded`);
      if (active.has(threadId)) return fail(id, codes.invalidRequest, 'a turn is already running on this thread');
      const text = textOf(params.input);
      const last = (text.trim().split('\n').pop() ?? '').trim();
      if (last === 'overloaded-always' || (last === 'overloaded' && !overloadedOnce.has(threadId))) {
        overloadedOnce.add(threadId);
        return fail(id, codes.overloaded, 'Server overloaded; retry later.');
      }
      const turn: ActiveTurn = { turnId: `turn_${randomUUID().slice(0, 8)}`, abort: new AbortController(), deaf: last === 'hang-deaf' };
      active.set(threadId, turn);
      reply(id, { turn: { id: turn.turnId, status: 'inProgress', items: [], error: null } });
      void runTurn(threadId, turn.turnId, text, turn.abort);
    },
    'turn/interrupt': (id, params) => {
      const turn = active.get(typeof params.threadId === 'string' ? params.threadId : '');
      if (!turn || turn.turnId !== params.turnId) return fail(id, codes.invalidRequest, 'no such running turn');
      reply(id, {});
      if (!turn.deaf) turn.abort.abort();
    },
  };

  const onRequest = (id: Id, method: string, params: Record<string, unknown>) => {
    if (method === 'initialize') {
      if (initialized) return fail(id, codes.invalidRequest, 'Already initialized');
      initialized = true;
      return reply(id, { userAgent: 'fake-codex/0.1.0', codexHome: '/nonexistent/fake-codex-home', platformFamily: 'unix', platformOs: process.platform });
    }
    if (!initialized) return fail(id, codes.invalidRequest, 'Not initialized');
    const handler = Object.hasOwn(handlers, method) ? handlers[method] : undefined;
    if (!handler) return fail(id, codes.methodNotFound, `unknown method ${method}`);
    handler(id, params);
  };

  return {
    receive(line) {
      if (line.trim() === '') return;
      let message: Incoming;
      try {
        message = JSON.parse(line) as Incoming;
      } catch {
        io.record({ unparsable: line });
        return send({ id: null, error: { code: codes.parseError, message: 'Parse error' } });
      }
      io.record(message);
      if (typeof message !== 'object' || message === null) return;
      const params = (typeof message.params === 'object' && message.params !== null ? message.params : {}) as Record<string, unknown>;
      const hasId = message.id !== undefined && message.id !== null;
      if (typeof message.method === 'string' && hasId) return onRequest(message.id as Id, message.method, params);
      if (typeof message.method === 'string') return; // notifications (`initialized`) need no answer
      if (hasId) {
        const resolve = awaitingClient.get(String(message.id));
        awaitingClient.delete(String(message.id));
        resolve?.({ result: message.result, ...(message.error ? { error: message.error } : {}) });
      }
    },
  };
}

/** The text of a turn's input items, joined. */
function textOf(input: unknown): string {
  if (!Array.isArray(input)) return '';
  return input
    .map((item) => (typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'text' ? String((item as { text?: unknown }).text ?? '') : ''))
    .filter(Boolean)
    .join('\n');
}

