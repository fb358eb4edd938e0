import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface WorkerMetrics {
  registry: Registry;
  observeInterrupt(latencyMs: number): void;
  /** A new event's wake-up job reached this worker's handler, `ms` after the gateway had the event stored. */
  observeWakeDelay(ms: number): void;
  observeTurn(outcome: string, seconds: number): void;
  countRecoveryNote(kind: 'recovery' | 'resume'): void;
  countCompression(outcome: 'done' | 'skipped_lock' | 'skipped_rotated' | 'skipped_stale' | 'failed'): void;
  /** A committed compression's own work: the whole call minus the summariser's time (issue 4: < 100 ms). */
  observeCompressionGateway(ms: number): void;
  /** One summariser call, answered ('ok') or failed / timed out ('failed'). */
  observeCompressionSummariser(outcome: 'ok' | 'failed', ms: number): void;
  countTrimmedRequest(droppedMessages: number): void;
  countRestartIncrements(conversations: number): void;
  countSuspension(reason: string): void;
  /** A turn that ended without committing because this worker lost the conversation (issue 16, defect 2). */
  countSupersededTurn(reason: 'lease_lost' | 'commit_refused'): void;
  /** A turn stopped by TURN_TIMEOUT_MS, or a conversation deferred because its user runs USER_MAX_RUNNING_TURNS (issue 17, defect 3). */
  countTurnLimit(limit: 'timeout' | 'user_busy'): void;
  /** An error nobody expected, caught where it happened (`where`: 'turn', 'process', ...) so the worker goes on. */
  countUnexpectedError(where: string): void;
  /** One outbox row's delivery attempt: sent, retrying (in-line), postponed (rescheduled) or failed (for good). */
  countDelivery(platform: string, outcome: 'sent' | 'retrying' | 'postponed' | 'failed'): void;
  countRateLimited(platform: string): void;
  /** A turn answered by `model` (docs/turns.md "Model fallbacks"). */
  countModelAnswer(model: string): void;
  /** A turn moved from one model to the next after a 429, 5xx, timeout or lost connection. */
  countModelFallback(from: string, to: string): void;
  /** Reports `count()` as switchboard_worker_running_turns on each scrape (the workers' autoscaling figure, deploy/kubernetes). */
  trackRunningTurns(count: () => number): void;
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  // The standard process_* and nodejs_* names, unprefixed so stock Node.js dashboards work; the scrape target
  // (job/instance labels) tells worker and gateway apart.
  collectDefaultMetrics({ register: registry });
  const { interruptLatency, wakeDelay, turnDuration, notes, compressions, compressionGateway, compressionSummariser } = registerTimings(registry);
  const { trimmed, trimmedMessages, unexpected, superseded, turnLimits, restarts, suspensions, interrupts, deliveries, rateLimited } = registerCounters(registry);
  const { modelAnswers, modelFallbacks } = registerModelCounters(registry);
  return {
    registry,
    countRestartIncrements: (n) => restarts.inc(n),
    countSuspension: (reason) => suspensions.inc({ reason }),
    countSupersededTurn: (reason) => superseded.inc({ reason }),
    countTurnLimit: (limit) => turnLimits.inc({ limit }),
    countUnexpectedError: (where) => unexpected.inc({ where }),
    countCompression: (outcome) => compressions.inc({ outcome }),
    observeCompressionGateway: (ms) => compressionGateway.observe(ms / 1000),
    observeCompressionSummariser: (outcome, ms) => compressionSummariser.observe({ outcome }, ms / 1000),
    countTrimmedRequest: (dropped) => {
      trimmed.inc();
      trimmedMessages.inc(dropped);
    },
    observeInterrupt: (ms) => interruptLatency.observe(ms / 1000),
    // A clock stepped backwards between the two machines would give a negative delay; it is no delay.
    observeWakeDelay: (ms) => wakeDelay.observe(Math.max(0, ms) / 1000),
    observeTurn: (outcome, seconds) => {
      turnDuration.observe({ outcome }, seconds);
      if (outcome === 'interrupted' || outcome === 'cancelled') interrupts.inc({ outcome });
    },
    countDelivery: (platform, outcome) => deliveries.inc({ platform, outcome }),
    countRateLimited: (platform) => rateLimited.inc({ platform }),
    countRecoveryNote: (kind) => notes.inc({ kind }),
    countModelAnswer: (model) => modelAnswers.inc({ model }),
    countModelFallback: (from, to) => modelFallbacks.inc({ from, to }),
    trackRunningTurns: (count) => {
      // Read on scrape: nothing on the turn's path updates it.
      new Gauge({ name: 'switchboard_worker_running_turns', help: 'Conversations whose turn runs on this worker now', registers: [registry], collect() { this.set(count()); } });
    },
  };
}

/** Latencies and durations (and the counters that belong with them), registered in the order /metrics has always listed them. */
function registerTimings(registry: Registry) {
  const interruptLatency = new Histogram({
    name: 'switchboard_interrupt_latency_seconds',
    help: 'From the gateway storing new input to the running turn being aborted',
    buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });
  const wakeDelay = new Histogram({
    name: 'switchboard_wake_delay_seconds',
    help: 'From the gateway storing a new event to a worker starting its wake-up job (the queue hand-off)',
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [registry],
  });
  const turnDuration = new Histogram({
    name: 'switchboard_turn_duration_seconds',
    help: 'Turn duration by outcome',
    labelNames: ['outcome'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const notes = new Counter({ name: 'switchboard_api_only_notes_total', help: 'API-only notes sent to the model', labelNames: ['kind'], registers: [registry] });
  const compressions = new Counter({ name: 'switchboard_compressions_total', help: 'Compressions by outcome', labelNames: ['outcome'], registers: [registry] });
  // Fine buckets from 1 ms: the gateway's own part is tens of milliseconds, the model's seconds.
  const compressionBuckets = [0.001, 0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10];
  const compressionGateway = new Histogram({
    name: 'switchboard_compression_gateway_seconds',
    help: 'Committed compressions: time of compressConversation from start to return, minus the summariser call',
    buckets: compressionBuckets,
    registers: [registry],
  });
  const compressionSummariser = new Histogram({
    name: 'switchboard_compression_summariser_seconds',
    help: 'Summariser (model) calls made by compression, by outcome',
    labelNames: ['outcome'],
    buckets: compressionBuckets,
    registers: [registry],
  });
  return { interruptLatency, wakeDelay, turnDuration, notes, compressions, compressionGateway, compressionSummariser };
}

function registerCounters(registry: Registry) {
  const trimmed = new Counter({
    name: 'switchboard_requests_trimmed_total',
    help: 'Model requests sent with the oldest messages left out because compression could not run',
    registers: [registry],
  });
  const trimmedMessages = new Counter({ name: 'switchboard_trimmed_messages_total', help: 'Messages left out of such requests', registers: [registry] });
  const unexpected = new Counter({
    name: 'switchboard_worker_unexpected_errors_total',
    help: 'Errors nobody expected, caught and logged so the worker went on (by where they were caught)',
    labelNames: ['where'],
    registers: [registry],
  });
  const superseded = new Counter({
    name: 'switchboard_turns_superseded_total',
    help: 'Turns that committed nothing because their worker lost the conversation (lease lost, or the fenced commit refused)',
    labelNames: ['reason'],
    registers: [registry],
  });
  const turnLimits = new Counter({
    name: 'switchboard_turn_limits_total',
    help: 'Turns stopped by TURN_TIMEOUT_MS (timeout) and conversations deferred because their user ran USER_MAX_RUNNING_TURNS turns (user_busy)',
    labelNames: ['limit'],
    registers: [registry],
  });
  const restarts = new Counter({ name: 'switchboard_restart_increments_total', help: 'Restart counter increments (conversations cut off by a restart)', registers: [registry] });
  const suspensions = new Counter({ name: 'switchboard_suspensions_total', help: 'Conversations suspended', labelNames: ['reason'], registers: [registry] });
  const interrupts = new Counter({ name: 'switchboard_interrupts_total', help: 'Turns stopped before their end: interrupted by new input or cancelled by /stop or an operator', labelNames: ['outcome'], registers: [registry] });
  const deliveries = new Counter({ name: 'switchboard_deliveries_total', help: 'Outbox delivery attempts by platform and outcome', labelNames: ['platform', 'outcome'], registers: [registry] });
  const rateLimited = new Counter({ name: 'switchboard_platform_rate_limited_total', help: 'Platform answers of 429 (rate limited) by platform', labelNames: ['platform'], registers: [registry] });
  return { trimmed, trimmedMessages, unexpected, superseded, turnLimits, restarts, suspensions, interrupts, deliveries, rateLimited };
}

/** Which model answered, and the moves between models (MODEL_FALLBACKS). The labels are model names from the config: a few values. */
function registerModelCounters(registry: Registry) {
  const modelAnswers = new Counter({ name: 'switchboard_model_answers_total', help: 'Turns answered, by the model that answered', labelNames: ['model'], registers: [registry] });
  const modelFallbacks = new Counter({
    name: 'switchboard_model_fallbacks_total',
    help: 'Turns moved from one model to the next after a 429, 5xx, timeout or lost connection',
    labelNames: ['from', 'to'],
    registers: [registry],
  });
  return { modelAnswers, modelFallbacks };
}
