import { once } from 'node:events';
import { Redis } from 'ioredis';
import type { ManagedProcess } from '@switchboard/harness';
import type { TestSystem } from './system.ts';
import { redisUrl } from './test-env.ts';
import { lastUserText, waitForCondition, waitForModelRequest, type ModelRequest } from './turn-helpers.ts';

/**
 * Helpers for the restart tests (docs/restarts.md): real
 * worker processes stopped with SIGTERM or SIGKILL and started again, what
 * Postgres says about conversations, turns and workers, and the lifecycle
 * events on Redis.
 */

/** Worker settings that make a restart cycle take a second or two instead of a minute. */
export const fastRestartEnv: Record<string, string> = {
  DRAIN_TIMEOUT_MS: '300',
  HEARTBEAT_INTERVAL_MS: '200',
  WORKER_DEAD_AFTER_MS: '1500',
  SWEEP_INTERVAL_MS: '300',
  RESTART_SUSPEND_THRESHOLD: '3',
};

/** The start of the API-only resume note (packages/core api-only-notes.ts). */
export const resumeNotePrefix = 'Note from the chat gateway (not from the user): your previous turn was cut off by a restart';
/** The start of the one line a user gets after a restart-loop suspension (apps/worker run-turn.ts). */
export const suspendedNoticePrefix = 'Your previous session was paused after it was cut off by repeated restarts';

/**
 * A model rule for a streaming answer that lasts far longer than the drain
 * window (about 3000 chunks, one every 10 ms), so a turn is reliably still
 * running when its worker is stopped.
 */
export function slowRule(matchRegex: string, times?: number): Record<string, unknown> {
  return { matchRegex, replyRepeat: { text: 'word ', count: 9000 }, chunkDelayMs: 10, ...(times !== undefined ? { times } : {}) };
}

export interface StopResult {
  signal: NodeJS.Signals;
  /** Exit code (null when the process was killed by the signal). */
  exitCode: number | null;
  /** The signal that ended the process, if it did not exit by itself. */
  signalCode: NodeJS.Signals | null;
  /** From sending the signal to the process having exited. */
  stopMs: number;
  pid: number;
}

/** The worker processes of a TestSystem started with `workerProcesses: true`. */
export function liveWorkers(system: TestSystem): ManagedProcess[] {
  return system.workers.filter((w): w is ManagedProcess => 'child' in w && w.child.exitCode === null && w.child.signalCode === null);
}

/** Sends `signal` to the system's only live worker process and waits for it to exit. */
export async function stopWorker(system: TestSystem, signal: NodeJS.Signals): Promise<StopResult> {
  const live = liveWorkers(system);
  if (live.length !== 1) throw new Error(`expected exactly one live worker process, found ${live.length}`);
  const worker = live[0] as ManagedProcess;
  const pid = worker.child.pid ?? -1;
  const started = performance.now();
  await worker.stop(signal);
  return { signal, exitCode: worker.child.exitCode, signalCode: worker.child.signalCode, stopMs: performance.now() - started, pid };
}

/** Stops the worker with `signal` and starts a new worker process (which is ready when this returns). */
export async function restartWorker(system: TestSystem, signal: NodeJS.Signals): Promise<StopResult> {
  const stopped = await stopWorker(system, signal);
  await system.addWorker(true);
  return stopped;
}

export interface ConversationState {
  id: number;
  status: 'active' | 'suspended';
  suspend_reason: string | null;
  restart_count: number;
  current_session_id: number | null;
  pre_suspend_session_id: number | null;
}

export async function conversationState(system: TestSystem, chatId: number): Promise<ConversationState> {
  const [row] = await system.sql<ConversationState[]>`
    select id::int as id, status, suspend_reason, restart_count, current_session_id::int as current_session_id,
      pre_suspend_session_id::int as pre_suspend_session_id
    from conversations where chat_id = ${String(chatId)}`;
  if (!row) throw new Error(`no conversation for chat ${chatId}`);
  return row;
}

export interface TurnState {
  id: number;
  status: string;
  error: string | null;
  worker_id: string | null;
  cut_off: boolean;
}

export async function turnsOf(system: TestSystem, chatId: number): Promise<TurnState[]> {
  return system.sql<TurnState[]>`
    select t.id::int as id, t.status, t.error, t.worker_id, t.cut_off_at is not null as cut_off
    from turns t join conversations c on c.id = t.conversation_id
    where c.chat_id = ${String(chatId)} order by t.id`;
}

export async function eventStatuses(system: TestSystem, chatId: number): Promise<{ text: string; status: string }[]> {
  return system.sql<{ text: string; status: string }[]>`
    select e.text, e.status from inbound_events e join conversations c on c.id = e.conversation_id
    where c.chat_id = ${String(chatId)} order by e.id`;
}

/** Waits for Postgres to show `chatId`'s conversation in a state that `check` accepts; returns it. */
export async function waitForConversation(system: TestSystem, chatId: number, what: string, check: (state: ConversationState) => boolean, timeoutMs = 20_000): Promise<ConversationState> {
  let last: ConversationState | undefined;
  try {
    await waitForCondition(
      `chat ${chatId}: ${what}`,
      async () => {
        last = await conversationState(system, chatId).catch(() => undefined);
        return last !== undefined && check(last);
      },
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last state ${JSON.stringify(last)}`);
  }
  return last as ConversationState;
}

/**
 * Waits until a model request for `text` newer than `afterId` is streaming
 * (received by the sim) and the turn that made it is `running` in Postgres:
 * the moment to stop the worker under it.
 */
export async function waitForRunningTurn(system: TestSystem, chatId: number, text: string, afterRequestId = 0, timeoutMs = 20_000): Promise<{ request: ModelRequest; turnId: number }> {
  const request = await waitForModelRequest(system, (r) => r.id > afterRequestId && lastUserText(r) === text, { timeoutMs, what: `for ${JSON.stringify(text)} after request ${afterRequestId}` });
  let turnId = 0;
  await waitForCondition(`a running turn in chat ${chatId}`, async () => {
    const running = (await turnsOf(system, chatId)).filter((t) => t.status === 'running');
    turnId = running[0]?.id ?? 0;
    return running.length === 1;
  }, 5_000);
  return { request, turnId };
}

/** System messages of a request that are the resume note. */
export function resumeNotes(request: ModelRequest): number {
  return request.body.messages.filter((m) => m.role === 'system' && (m.content ?? '').startsWith(resumeNotePrefix)).length;
}

export interface RecordedLifecycleEvent {
  type: string;
  conversationId: number;
  sessionId?: number;
  turnId?: number;
  outcome?: string;
  reason?: string;
  at: string;
}

/** Subscribes to the system's `<prefix>:events` channel (what the admin stream shows) and records every event. */
export async function subscribeLifecycleEvents(system: TestSystem): Promise<{
  events: RecordedLifecycleEvent[];
  of(conversationId: number): RecordedLifecycleEvent[];
  waitFor(what: string, predicate: (event: RecordedLifecycleEvent) => boolean, timeoutMs?: number): Promise<RecordedLifecycleEvent>;
  close(): void;
}> {
  const subscriber = new Redis(redisUrl());
  const events: RecordedLifecycleEvent[] = [];
  const listeners = new Set<() => void>();
  subscriber.on('message', (_channel: string, message: string) => {
    events.push(JSON.parse(message) as RecordedLifecycleEvent);
    for (const listener of listeners) listener();
  });
  await subscriber.subscribe(`${system.redisPrefix}:events`);
  return {
    events,
    of: (conversationId) => events.filter((e) => e.conversationId === conversationId),
    waitFor(what, predicate, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(predicate);
          if (!found) return;
          cleanup();
          resolve(found);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no lifecycle event ${what} within ${timeoutMs} ms; saw ${JSON.stringify(events.map((e) => [e.type, e.conversationId]))}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    close: () => subscriber.disconnect(),
  };
}

/**
 * A stall a peer outlasts (docs/restarts.md, "Declared dead"): SIGSTOPs the
 * worker process `stalled` (its row `workerId`), runs `whileStalled` (what the
 * peer does meanwhile), waits until the row reads `dead`, then SIGCONTs it.
 * Resolves to its exit code once it exits, or 'still running' after 10 s.
 */
export async function stallUntilDeclaredDead(system: TestSystem, stalled: { process: ManagedProcess; workerId: string }, whileStalled: () => Promise<void>): Promise<number | string | null> {
  const { child } = stalled.process;
  const exited = once(child, 'exit');
  process.kill(child.pid ?? -1, 'SIGSTOP');
  try {
    await whileStalled();
    await waitForCondition('the stalled worker declared dead', async () => {
      const [row] = await system.sql<{ status: string }[]>`select status from workers where id = ${stalled.workerId}`;
      return row?.status === 'dead';
    }, 10_000);
  } finally {
    process.kill(child.pid ?? -1, 'SIGCONT');
  }
  const [code] = (await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(['still running']), 10_000))])) as [number | string | null];
  return code;
}
