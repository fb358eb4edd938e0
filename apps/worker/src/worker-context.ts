import type { AgentRuntime } from '@switchboard/agent';
import type { WorkerConfig } from '@switchboard/config';
import type { Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { PlatformSender } from '@switchboard/platforms';
import type { LeaseManager } from './conversation-lease.ts';

export type StopReason = 'interrupt' | 'stop' | 'shutdown' | 'lease_lost';

export interface RunningTurn {
  turnId: number;
  controller: AbortController;
  /** Why the turn was told to stop, set before the abort. */
  stopReason?: StopReason;
}

/** Everything a turn needs, built once per worker process. */
export interface WorkerContext {
  config: WorkerConfig;
  db: Database;
  runtime: AgentRuntime;
  senders: Map<string, PlatformSender>;
  leases: LeaseManager;
  log: Logger;
  workerId: string;
  /** Turns running in this process, by conversation id. */
  running: Map<number, RunningTurn>;
}
