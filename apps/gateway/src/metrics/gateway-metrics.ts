import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { loadClusterFigures, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { TurnQueue } from '@switchboard/queue';

export interface GatewayMetrics {
  registry: Registry;
  countInbound(platform: string, outcome: string): void;
  /** An inbound event that is acknowledged but never stored (a data error, an unknown Telegram chat type): not retried. */
  countInboundRejected(platform: string, reason: string): void;
  countAdminAuthFailure(kind: 'missing' | 'wrong' | 'blocked'): void;
  countAdminAction(action: string, result: string): void;
  setEventClients(count: number): void;
  countEventClientDropped(reason: 'slow' | 'unresponsive' | 'full'): void;
}

export interface GatewayMetricsSources {
  queues: TurnQueue[];
  db: Database;
  log: Logger;
}

/** Scrape-time reads must never hold a scrape (or a connection) for long. */
const scrapeTimeoutMs = 1000;
const jobStates = ['waiting', 'active', 'delayed', 'failed', 'prioritized', 'paused'] as const;

/**
 * The gateway's Prometheus metrics (docs/admin.md): one registry per app so
 * several gateways in one process (tests) never share counters. Queue depths
 * and the cluster-wide turn figures are read on scrape, not kept up to date.
 */
export function createGatewayMetrics(sources: GatewayMetricsSources): GatewayMetrics {
  const registry = new Registry();
  // The standard process_* and nodejs_* names (event-loop lag and its percentiles included), unprefixed so stock
  // Node.js dashboards work; gateway and worker are told apart by the scrape target (job/instance labels).
  collectDefaultMetrics({ register: registry });
  const counted = createCountedMetrics(registry);
  registerQueueDepthGauge(registry, sources);
  registerClusterFiguresGauge(registry, sources);
  return {
    registry,
    countInbound: (platform, outcome) => counted.inbound.inc({ platform, outcome }),
    countInboundRejected: (platform, reason) => counted.rejected.inc({ platform, reason }),
    countAdminAuthFailure: (kind) => counted.authFailures.inc({ kind }),
    countAdminAction: (action, result) => counted.actions.inc({ action, result }),
    setEventClients: (count) => counted.eventClients.set(count),
    countEventClientDropped: (reason) => counted.dropped.inc({ reason }),
  };
}

/** The metrics the gateway keeps up to date as things happen (the others are read on scrape). */
function createCountedMetrics(registry: Registry) {
  const inbound = new Counter({
    name: 'switchboard_inbound_events_total',
    help: 'Webhook deliveries by platform and outcome: what ingress answered (accepted, duplicate, refused, ...), or ignored, unauthorized, rejected (4xx), unavailable (503), error',
    labelNames: ['platform', 'outcome'],
    registers: [registry],
  });
  const rejected = new Counter({
    name: 'switchboard_inbound_rejected_total',
    help: 'Inbound events acknowledged but never stored: Postgres can never store them (data_exception, constraint_violation, program_limit, unencodable_key), or a Telegram chat type this version does not know (unknown_chat_type)',
    labelNames: ['platform', 'reason'],
    registers: [registry],
  });
  const authFailures = new Counter({
    name: 'switchboard_admin_auth_failures_total',
    help: 'Admin requests refused: missing or wrong credentials, or blocked after too many failures',
    labelNames: ['kind'],
    registers: [registry],
  });
  const actions = new Counter({ name: 'switchboard_admin_actions_total', help: 'Admin actions by action and result', labelNames: ['action', 'result'], registers: [registry] });
  const eventClients = new Gauge({ name: 'switchboard_admin_event_clients', help: 'Open admin event stream WebSockets on this gateway', registers: [registry] });
  const dropped = new Counter({
    name: 'switchboard_admin_event_clients_dropped_total',
    help: 'Event stream clients closed by the gateway: slow (send buffer over the limit), unresponsive (no pong), full (client limit reached)',
    labelNames: ['reason'],
    registers: [registry],
  });
  return { inbound, rejected, authFailures, actions, eventClients, dropped };
}

function registerQueueDepthGauge(registry: Registry, sources: GatewayMetricsSources): void {
  new Gauge({
    name: 'switchboard_queue_jobs',
    help: 'BullMQ jobs by queue and state, read on scrape',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      for (const queue of sources.queues) {
        try {
          const counts = await withTimeout(queue.getJobCounts(...jobStates));
          for (const state of jobStates) this.set({ queue: queue.name, state }, counts[state] ?? 0);
        } catch (err) {
          sources.log.debug({ err, queue: queue.name }, 'queue depth not read for metrics');
        }
      }
    },
  });
}

function registerClusterFiguresGauge(registry: Registry, sources: GatewayMetricsSources): void {
  new Gauge({
    name: 'switchboard_conversations',
    help: 'Cluster-wide figures read from Postgres on scrape: running turns, suspended conversations, conversations with input waiting',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      try {
        const row = await withTimeout(loadClusterFigures(sources.db));
        if (!row) return;
        this.set({ state: 'running_turn' }, row.running);
        this.set({ state: 'suspended' }, row.suspended);
        this.set({ state: 'input_waiting' }, row.waiting);
      } catch (err) {
        sources.log.debug({ err }, 'conversation figures not read for metrics');
      }
    },
  });
}

async function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('metrics read timed out')), scrapeTimeoutMs)))]);
  } finally {
    clearTimeout(timer);
  }
}
