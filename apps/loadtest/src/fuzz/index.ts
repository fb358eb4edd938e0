export { runFuzz, planFuzzCases, fuzzProblems, readProcessMetrics, defaultTag, type FuzzOptions } from './run-fuzz.ts';
export { runFuzzWithRowChecks, mib, type PhasedFuzzResult } from './fuzz-phases.ts';
export { formatFuzzSummary } from './format-summary.ts';
export { createDiscordSigner } from './discord-cases.ts';
export { fuzzRoutes, fuzzClasses, type FuzzTarget, type FuzzSummary, type FuzzClass, type FuzzRoute, type FuzzExample, type RouteFigures } from './fuzz-types.ts';
