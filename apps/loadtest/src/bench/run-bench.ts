/**
 * `npm run bench [-- --quick] [-- --write]`: runs the benchmark scenarios of
 * issue 8 against real processes and prints the report (the machine, the
 * command and every figure) as markdown; only `--write` replaces
 * docs/benchmarks.md with it, so a curious run never rewrites the committed
 * figures. About ten minutes in full, one with --quick.
 */
import { parseArgs } from 'node:util';

const usage = `Usage: npm run bench -- [--quick] [--write]

Runs the benchmark scenarios (throughput, latency, memory, CPU profile, cost
growth, compression) against real processes on this machine and prints the
report as markdown. Needs Postgres and Redis (scripts/services.sh starts them).

  --quick   a short run (about a minute) instead of the full one (about ten)
  --write   also replace docs/benchmarks.md with the report
  --help    print this and exit
`;

function readArgs(): { quick: boolean; write: boolean; help: boolean } {
  try {
    const options = { quick: { type: 'boolean', default: false }, write: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } as const;
    return parseArgs({ options }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage}`);
    process.exit(2);
  }
}

const args = readArgs();
if (args.help) {
  process.stdout.write(usage);
  process.exit(0);
}

// Loaded only for a run, so --help answers at once.
const { runBench } = await import('./bench-runner.ts');
await runBench({ quick: args.quick, write: args.write }).catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
