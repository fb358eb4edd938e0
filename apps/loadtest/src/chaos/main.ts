/**
 * `npx tsx apps/loadtest/src/chaos/main.ts <options>` (the lead wires it as
 * `npm run chaos`): the load test under a seeded fault schedule; prints the
 * table, writes JSON and HTML, exits 1 when a check fails, 2 for bad options.
 * docs/guarantees.md "Chaos".
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { renderChaosTable } from './chaos-report.ts';
import { faultKinds, profiles } from './fault-schedule.ts';

const usage = `Usage: npx tsx apps/loadtest/src/chaos/main.ts [options]

Replays transcripts on Telegram, Slack and Discord (simulated) into N gateways
and M workers started as real processes, against a private Postgres and Redis,
while a seeded schedule kills and restarts processes and services and makes the
platforms and the model misbehave; then checks every conversation (docs/guarantees.md, "Chaos").

  --seed N          fault schedule and burst seed (default 1); the same seed gives the same schedule
  --profile P       short (~${profiles.short.durationS} s of load, ${profiles.short.faults} faults) | long (${profiles.long.durationS} s, ${profiles.long.faults} faults) (default short)
  --gateways N      gateway processes (default 2)
  --workers M       worker processes (default 2)
  --duration-s N    seconds of load (default: the profile's); faults are spread over it
  --faults N        how many faults (default: the profile's)
  --kinds K,K       only these fault kinds, drawn by weight (default: the profile's); to chase one failure
  --out DIR         report directory (default .data/chaos/<timestamp>)
  --help
`;

const int = (name: string, min: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min, `${name} must be at least ${min}`);

const schema = z.object({
  seed: int('--seed', 0).default('1'),
  profile: z.enum(['short', 'long'], { message: '--profile must be short or long' }).default('short'),
  gateways: int('--gateways', 1).default('2'),
  workers: int('--workers', 1).default('2'),
  'duration-s': int('--duration-s', 10).optional(),
  faults: int('--faults', 1).optional(),
  kinds: z
    .string()
    .transform((list) => list.split(',').map((kind) => kind.trim()))
    .pipe(z.array(z.enum(faultKinds, { message: `--kinds takes a comma-separated list of ${faultKinds.join(', ')}` })).min(1))
    .optional(),
  out: z.string().min(1).optional(),
});

async function main(): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(['seed', 'profile', 'gateways', 'workers', 'duration-s', 'faults', 'kinds', 'out'].map((name) => [name, { type: 'string' as const }])),
      },
    }).values;
  } catch (error) {
    console.error(`chaos: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const parsed = schema.safeParse(values);
  if (!parsed.success) {
    console.error(`chaos: ${parsed.error.issues.map((issue) => issue.message).join('\nchaos: ')}\n\n${usage}`);
    return 2;
  }
  const v = parsed.data;
  // Loaded only for a run, so --help answers at once.
  const { runChaos } = await import('./run-chaos.ts');
  const report = await runChaos({
    seed: v.seed,
    profile: v.profile,
    gateways: v.gateways,
    workers: v.workers,
    ...(v['duration-s'] !== undefined ? { durationS: v['duration-s'] } : {}),
    ...(v.faults !== undefined ? { faults: v.faults } : {}),
    ...(v.kinds !== undefined ? { kinds: v.kinds } : {}),
    ...(v.out ? { outDir: v.out } : {}),
    log: (line) => console.error(line),
  });
  console.log(renderChaosTable(report));
  console.log(`\nreport: ${report.files?.json ?? ''}\n        ${report.files?.html ?? ''}`);
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`chaos failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  },
);
