import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Latencies in milliseconds, kept at microsecond resolution (hdr-histogram-js). */
export function createLatencyRecorder(): { record(ms: number): void; summary(): LatencySummary } {
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
  return {
    record: (ms) => histogram.recordValue(Math.max(1, Math.round(ms * 1000))),
    summary: () => ({
      count: histogram.totalCount,
      p50: histogram.getValueAtPercentile(50) / 1000,
      p95: histogram.getValueAtPercentile(95) / 1000,
      p99: histogram.getValueAtPercentile(99) / 1000,
      max: histogram.maxValue / 1000,
    }),
  };
}
