import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface LatencyRecorder {
  record(ms: number): void;
  summary(): LatencySummary;
}

/** Latencies in milliseconds, kept at microsecond resolution (hdr-histogram-js). */
export function createLatencyRecorder(): LatencyRecorder {
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
  return {
    record: (ms) => histogram.recordValue(Math.min(600_000_000, Math.max(1, Math.round(ms * 1000)))),
    summary: () => ({
      count: histogram.totalCount,
      p50: histogram.getValueAtPercentile(50) / 1000,
      p95: histogram.getValueAtPercentile(95) / 1000,
      p99: histogram.getValueAtPercentile(99) / 1000,
      max: histogram.maxValue / 1000,
    }),
  };
}

export function summarizeLatencies(values: Iterable<number>): LatencySummary {
  const recorder = createLatencyRecorder();
  for (const value of values) recorder.record(value);
  return recorder.summary();
}
