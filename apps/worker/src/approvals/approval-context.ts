import type { WorkerConfig } from '@switchboard/config';
import type { Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { PlatformSender } from '@switchboard/platforms';
import type { ApprovalWaiters } from './approval-waiters.ts';

/** What asking the chat user needs; the worker's context has all of it (a test builds its own). */
export interface ApprovalContext {
  db: Database;
  senders: Map<string, PlatformSender>;
  log: Logger;
  workerId: string;
  config: Pick<WorkerConfig, 'APPROVAL_TIMEOUT_SECONDS' | 'CODEX_AUTO_APPROVE' | 'WORKER_DEAD_AFTER_MS'>;
  /** Signals from the gateway (decided, a reply queued); without them the question is re-read every `approvalPollMs`. */
  approvalWaiters?: ApprovalWaiters;
  /** How often a waiting question is re-read (default 2 s). */
  approvalPollMs?: number;
}
