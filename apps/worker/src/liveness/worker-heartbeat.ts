import { createDbClient, heartbeatWorker } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { HeartbeatHealth } from './heartbeat-health.ts';

/** The exit code of a worker that learned it was declared dead (EX_TEMPFAIL: the supervisor starts it again). */
export const declaredDeadExitCode = 75;

export interface HeartbeatParts {
  databaseUrl: string;
  /** DATABASE_PREPARED_STATEMENTS. */
  prepare: boolean;
  workerId: string;
  intervalMs: number;
  health: HeartbeatHealth;
  log: Logger;
  /** Called once, synchronously, when a heartbeat finds this worker's row declared dead. */
  onDeclaredDead: () => void;
}

export interface WorkerHeartbeat {
  stop(): Promise<void>;
}

/**
 * The liveness heartbeat (docs/restarts.md "Declared dead"). It beats on the
 * main event loop on purpose: what a peer must learn is whether this
 * process's turns still make progress, and a beat from a thread would keep a
 * wedged loop alive forever (a thread gated on ticks from the loop stalls
 * with the loop anyway, for GC, CPU or SIGSTOP alike). Its own one-connection
 * pool means it never queues behind the turns' queries (issue 29: a busy pool
 * delayed beats past WORKER_DEAD_AFTER_MS). A stall can still get this worker
 * declared dead; the first beat after it answers 'dead', and the worker then
 * gives up everything it runs instead of finishing turns that are no longer its own.
 */
export function startWorkerHeartbeat(parts: HeartbeatParts): WorkerHeartbeat {
  const client = createDbClient(parts.databaseUrl, { max: 1, applicationName: 'switchboard-worker-heartbeat', prepare: parts.prepare });
  let declaredDead = false;
  const beat = async (): Promise<void> => {
    try {
      const state = await heartbeatWorker(client.db, parts.workerId);
      if (state === 'alive') return parts.health.recordSuccess();
      if (declaredDead) return;
      declaredDead = true;
      parts.log.fatal({ workerId: parts.workerId }, 'this worker was declared dead by a peer (its heartbeat stalled); its turns are resumed elsewhere, so it abandons them uncommitted and exits');
      parts.onDeclaredDead();
    } catch (err) {
      parts.health.recordFailure();
      parts.log.warn({ err }, 'heartbeat failed');
    }
  };
  const timer = setInterval(() => void beat(), parts.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await client.close();
    },
  };
}
