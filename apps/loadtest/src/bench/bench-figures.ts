import type { LatencySummary } from '../latency-histogram.ts';
import type { LoadTestReport } from '../report.ts';
import type { BuildMemoryRow } from './build-memory.ts';
import type { CompressionCost } from './compression-cost.ts';
import type { CostPoint } from './cost-growth.ts';
import type { ProfileSummary } from './cpu-profile.ts';
import type { CpuUsage, RssSeries } from './process-stats.ts';
import type { ScheduleBurst } from './schedule-burst.ts';
import type { ThroughputPoint } from './throughput-scenarios.ts';
import type { TurnPhases } from './turn-scenarios.ts';

/** Everything one bench run measured: what the report (bench-report.ts), its targets and its before/after table are rendered from. */
export interface BenchFigures {
  command: string;
  startedAt: Date;
  finishedAt: Date;
  /** Load average when the bench started: other work on the machine skews every figure. */
  loadAtStart: number[];
  throughput: { name: string; points: ThroughputPoint[]; best: ThroughputPoint | undefined }[];
  relayBest: ThroughputPoint | undefined;
  halfRate?: { rate: number; report: LoadTestReport; cpu: CpuUsage; redisCommandsPerTurn?: number };
  memory: { atStart: Record<string, number>; underLoadMax: Record<string, number>; long?: { durationS: number; rate: number; report: LoadTestReport; series: RssSeries[] } };
  profiles: { rate: number; summaries: Record<string, ProfileSummary | undefined> };
  cost?: { history: CostPoint[]; conversations: CostPoint[] };
  turns?: { overhead: LatencySummary; endToEnd: LatencySummary; phases?: TurnPhases; interrupt: LatencySummary };
  /** The minimal relay's sequential overhead: the three HTTP hops (webhook, model, sendMessage) and nothing else. */
  relaySequential?: LatencySummary;
  compression?: CompressionCost;
  /** Reminders all due at once (docs/schedules.md). */
  scheduleBurst?: ScheduleBurst;
  /** Gateway and worker RSS run from the sources under tsx and from dist/ (`npm run build`). */
  buildMemory?: BuildMemoryRow[];
}
