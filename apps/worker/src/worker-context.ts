import type { ConversationActions, ScheduleDeps } from '@switchboard/actions';
import type { AgentRuntime, Summariser } from '@switchboard/agent';
import type { WorkerConfig } from '@switchboard/config';
import type { Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { PlatformSender } from '@switchboard/platforms';
import type { LifecycleEvent } from '@switchboard/queue';
import type { ApprovalWaiters } from './approvals/approval-waiters.ts';
import type { DeferredConversations } from './conversation/deferred-conversations.ts';
import type { HeartbeatHealth } from './liveness/heartbeat-health.ts';
import type { HistoryCache } from './turn/history-cache.ts';
import type { LeaseManager } from './conversation/conversation-lease.ts';
import type { RunningTurns } from './conversation/running-turns.ts';
import type { MediaReach } from './turn/media-reach.ts';
import type { ReactionBoard } from './turn/reaction-board.ts';
import type { TurnRuntimes } from './turn/turn-runtime.ts';
import type { WorkerMetrics } from './worker-metrics.ts';

/** Everything a turn needs, built once per worker process. */
export interface WorkerContext {
  config: WorkerConfig;
  db: Database;
  /** The OpenAI runtime (its tool schemas count into every request's fixed tokens). */
  runtime: AgentRuntime;
  /** The runtime of each conversation's turn: its own setting, else AGENT_RUNTIME (openai, or a Codex child from this worker's pool). */
  runtimes: TurnRuntimes;
  summariser: Summariser;
  /** Tokens every request carries besides the session: system prompt and tool schemas. */
  fixedRequestTokens: number;
  senders: Map<string, PlatformSender>;
  /** Users' files: the platforms' fetchers and the transcriber (docs/media.md). */
  media: MediaReach;
  /** Transcripts kept in memory across turns, so a turn reads only what is new. */
  history: HistoryCache;
  leases: LeaseManager;
  log: Logger;
  workerId: string;
  metrics: WorkerMetrics;
  /**
   * Records the event for webhook delivery (when webhooks are configured)
   * and publishes it to the live stream; resolves once it is recorded.
   */
  emit(event: Omit<LifecycleEvent, 'at'>): Promise<void>;
  /** The conversation actions (packages/actions): chat commands are their door inside the lease holder's loop. */
  actions: ConversationActions;
  /** The turn (or the turn being prepared) of each conversation this process holds the lease of. */
  running: RunningTurns;
  /** Whether this worker's own heartbeats allow it to declare silent peers dead (heartbeat-health.ts). */
  heartbeat: HeartbeatHealth;
  /** Conversations deferred by USER_MAX_RUNNING_TURNS, woken when a turn of their user ends here. */
  deferred: DeferredConversations;
  /** Adds a wake-up job for a conversation (resolves once added). */
  wake(conversationId: number, reason: 'deferred' | 'dead_worker'): Promise<void>;
  /** Turns waiting on a question to the chat user hear the gateway's approval signals here (approvals/). */
  approvalWaiters: ApprovalWaiters;
  /** The status reactions this process shows on users' messages (STATUS_REACTIONS), one board for every turn. */
  reactions: ReactionBoard;
  /** The schedule door (docs/schedules.md) for `/schedules` in chat; the `schedule` tool has its own book over the same. */
  schedules: { deps: ScheduleDeps; maxPerUser: number };
  /** Set on shutdown: no new turn starts. */
  closing: boolean;
}
