/**
 * `npm run loadtest -- <options>`: replays transcripts through the simulator
 * into a gateway, prints the report and exits 1 when a reply was lost,
 * duplicated, out of order or wrong (2 for bad options). docs/loadtest.md.
 */
import { parseCliOptions, usage } from './options.ts';
import { renderReportTable } from './report.ts';
import { runLoadTest } from './run-load-test.ts';

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseCliOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`loadtest: ${error instanceof Error ? error.message.split('\n').join('\nloadtest: ') : String(error)}\n\n${usage}`);
    return 2;
  }
  if (parsed.kind === 'help') {
    console.log(usage);
    return 0;
  }
  const interrupt = new AbortController();
  // First Ctrl-C: stop sending and report what was sent; a second one exits at once.
  process.once('SIGINT', () => {
    console.error('\nloadtest: stopping (Ctrl-C again to quit without a report)');
    interrupt.abort();
    process.once('SIGINT', () => process.exit(130));
  });
  const report = await runLoadTest(parsed.options, { log: (line) => console.error(line), signal: interrupt.signal });
  console.log(renderReportTable(report));
  console.log(`\nreport: ${report.files?.json ?? ''}\n        ${report.files?.html ?? ''}`);
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`loadtest failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  },
);
