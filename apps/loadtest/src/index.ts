export { runLoadTest, type RunHooks } from './run-load-test.ts';
export { createLoadTestOptions, parseCliOptions, type LoadTestOptions, type LoadTarget, type Pacing, type BusyMode } from './options.ts';
export type { LoadTestReport, TimelinePoint } from './report.ts';
export type { ReplyCounts, ReplyProblem } from './reply-checker.ts';
export type { LatencySummary } from './latency-histogram.ts';
export { loadTranscripts, defaultTranscriptPath } from './transcripts.ts';
