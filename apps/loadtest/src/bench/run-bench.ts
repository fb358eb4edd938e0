/**
 * `npm run bench [-- --quick] [-- --write]`: runs the benchmark scenarios of
 * issue 8 against real processes and prints the report (the machine, the
 * command and every figure) as markdown; only `--write` replaces
 * docs/benchmarks.md with it, so a curious run never rewrites the committed
 * figures. About ten minutes in full, one with --quick.
 */
import { readCommandLine } from '@switchboard/harness';

const usage = `Usage: npm run bench -- [--quick] [--write]

Runs the benchmark scenarios (throughput, latency, memory, CPU profile, cost
growth, compression) against real processes on this machine and prints the
report as markdown. Needs Postgres and Redis (scripts/services.sh starts them).

  --quick   a short run (about a minute) instead of the full one (about ten)
  --write   also replace docs/benchmarks.md with the report
  --help    print this and exit
`;

const args = readCommandLine({ quick: { type: 'boolean', default: false }, write: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } }, usage);

// Loaded only for a run, so --help answers at once.
const { runBench } = await import('./bench-runner.ts');
await runBench({ quick: args.quick, write: args.write }).catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
