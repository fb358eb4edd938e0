import { createRandom } from '../conversation-runner.ts';

/**
 * The chaos run's fault plan: pure, so the same seed and profile always give
 * the same faults at the same offsets (what makes a failing run replayable).
 */

export const faultKinds = [
  'worker-kill',
  'worker-kill-delivery',
  'worker-kill-compression',
  'gateway-kill',
  'all-sigterm',
  'redis-restart',
  'postgres-restart',
  'platform-429',
  'platform-5xx',
  'discord-heartbeat-acks',
  'model-slow',
  'model-failing',
] as const;

export type FaultKind = (typeof faultKinds)[number];

export interface ScheduledFault {
  /** Offset from the start of the load, ms. */
  atMs: number;
  kind: FaultKind;
  /** Which process (index into the workers or gateways) or platform the fault hits; 'all' where it hits every one. */
  target: string;
  /** How long the fault lasts: a process stays dead, a service down, a platform or the model misbehaves. */
  durationMs: number;
}

export type ProfileName = 'short' | 'long';

export interface ChaosProfile {
  name: ProfileName;
  durationS: number;
  /** Faults to place over the run; they never overlap, so each fault's recovery is its own. */
  faults: number;
  kinds: readonly FaultKind[];
  /** Quiet time at the start (the load warms up) and at the end (the last recovery is seen). */
  leadInMs: number;
  tailMs: number;
  /** Worker settings that differ from production's defaults, to fit the profile's time. */
  workerEnv?: Record<string, string>;
}

/**
 * short: about a minute inside `npm test`, each kind that a restart of a
 * process under tsx can afford on 2 cores. The Discord heartbeat-ACK drop is
 * left to the long profile: the simulator's heartbeat interval is Discord's
 * 41.25 s and not configurable by environment, so noticing a zombie
 * connection takes up to 83 s.
 */
export const profiles: Record<ProfileName, ChaosProfile> = {
  short: {
    name: 'short',
    durationS: 40,
    faults: 9,
    // Cheap faults (seconds) between the slow ones (a restart under load takes 5–20 s); the SIGTERM of everything last, as it takes longest.
    kinds: ['worker-kill', 'platform-429', 'redis-restart', 'gateway-kill', 'postgres-restart', 'model-failing', 'platform-5xx', 'model-slow', 'all-sigterm'],
    leadInMs: 3_000,
    tailMs: 4_000,
    // The SIGTERM of everything waits for running turns up to DRAIN_TIMEOUT_MS (10 s by default) before they are cut off: 2 s keeps the short run short.
    workerEnv: { DRAIN_TIMEOUT_MS: '2000' },
  },
  long: {
    name: 'long',
    durationS: 900,
    faults: 110,
    kinds: faultKinds,
    leadInMs: 5_000,
    tailMs: 10_000,
    // With the default prompt and tools (~377 tokens since the `schedule` tool: 146 more than the 231 this was sized for, so
    // 183 more context keeps the room before compression) a context this small makes a 12-line conversation compress once
    // or twice, so compressions run all through the load and aimed kills land in them.
    workerEnv: { MODEL_CONTEXT_TOKENS: '1083' },
  },
};

/** How long each kind lasts, [min, max] ms. */
const durations: Record<FaultKind, [number, number]> = {
  'worker-kill': [300, 1_500],
  'worker-kill-delivery': [300, 1_500],
  'worker-kill-compression': [300, 1_500],
  'gateway-kill': [300, 1_500],
  'all-sigterm': [200, 800],
  'redis-restart': [500, 2_000],
  'postgres-restart': [500, 2_000],
  'platform-429': [1_000, 3_000],
  'platform-5xx': [1_000, 3_000],
  'discord-heartbeat-acks': [50_000, 60_000],
  'model-slow': [1_500, 3_000],
  'model-failing': [500, 1_500],
};

/** Relative weights in the long profile: kills of single processes are the common failure and the one issue 19 asks to repeat. */
const weights: Record<FaultKind, number> = {
  'worker-kill': 4,
  'worker-kill-delivery': 1.5,
  'worker-kill-compression': 1.5,
  'gateway-kill': 3,
  'all-sigterm': 1,
  'redis-restart': 2,
  'postgres-restart': 2,
  'platform-429': 2,
  'platform-5xx': 2,
  'discord-heartbeat-acks': 0.25,
  'model-slow': 2,
  'model-failing': 2,
};

export interface Topology {
  gateways: number;
  workers: number;
}

/**
 * seed → faults in time order. The run is cut in `faults` equal slots; each
 * fault starts at a seeded point in the first half of its slot, less its own
 * length. Faults are played one after another: one whose time comes while
 * the previous is still being undone (a restart under load takes seconds)
 * starts right after it, so they never overlap.
 * The short profile takes its kinds in the order listed, so every one of them
 * appears; the long one draws them by weight.
 */
export function generateFaultSchedule(seed: number, profile: ChaosProfile, topology: Topology): ScheduledFault[] {
  const random = createRandom(seed);
  const span = profile.durationS * 1000 - profile.leadInMs - profile.tailMs;
  const slot = span / profile.faults;
  const faults: ScheduledFault[] = [];
  for (let i = 0; i < profile.faults; i++) {
    const kind = profile.name === 'short' ? (profile.kinds[i % profile.kinds.length] as FaultKind) : pickWeighted(random, profile.kinds);
    const [min, max] = durations[kind];
    const durationMs = Math.round(min + random() * (max - min));
    // A restart takes seconds: keep half the slot for the system to come back before the next fault.
    const room = Math.max(0, slot / 2 - durationMs);
    const atMs = Math.round(profile.leadInMs + i * slot + random() * room);
    faults.push({ atMs, kind, target: pickTarget(random, kind, topology), durationMs });
  }
  return faults;
}

function pickWeighted(random: () => number, kinds: readonly FaultKind[]): FaultKind {
  const total = kinds.reduce((sum, kind) => sum + weights[kind], 0);
  let roll = random() * total;
  for (const kind of kinds) {
    roll -= weights[kind];
    if (roll < 0) return kind;
  }
  return kinds.at(-1) as FaultKind;
}

function pickTarget(random: () => number, kind: FaultKind, topology: Topology): string {
  const index = (count: number) => String(Math.min(count - 1, Math.floor(random() * count)));
  // An aimed kill hits the worker caught in the act; the scheduled one only when none is.
  if (kind === 'worker-kill' || kind === 'worker-kill-compression') return `worker-${index(topology.workers)}`;
  if (kind === 'worker-kill-delivery') return (['telegram', 'slack', 'discord'] as const)[Number(index(3))] as string;
  if (kind === 'gateway-kill') return `gateway-${index(topology.gateways)}`;
  if (kind === 'platform-429' || kind === 'platform-5xx') return (['telegram', 'slack', 'discord'] as const)[Number(index(3))] as string;
  if (kind === 'discord-heartbeat-acks') return 'discord';
  if (kind === 'model-slow' || kind === 'model-failing') return 'model';
  if (kind === 'redis-restart') return 'redis';
  if (kind === 'postgres-restart') return 'postgres';
  return 'all';
}
