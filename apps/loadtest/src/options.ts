import { parseArgs } from 'node:util';
import { z } from 'zod';
import { supportedPlatforms, unsupportedPlatformReason, type PlatformName } from './drivers/platform-driver.ts';
import { defaultTranscriptPath } from './transcripts.ts';

export type Pacing = { kind: 'reply' } | { kind: 'rate'; turnsPerSecond: number } | { kind: 'think'; thinkMs: number };
export type BusyMode = 'queue' | 'interrupt';

/** A system someone else started: the simulator whose webhook already points at the gateway. */
export interface LoadTarget {
  /** Records replies and runs the scripted model. */
  simUrl: string;
  /** Simulators that deliver the human side, one per gateway; default [simUrl]. */
  inboundSimUrls?: string[];
  gatewayUrls?: string[];
  /** Send explicit update ids (only safe on a fresh database, where no earlier run used them). */
  explicitUpdateIds?: boolean;
}

export interface LoadTestOptions {
  transcripts: string;
  /** Conversations to replay; undefined = repeat until durationS runs out (50 when neither is set). */
  conversations?: number;
  /** Turns per conversation at most; undefined = the whole recorded conversation. */
  maxTurns?: number;
  platforms: PlatformName[];
  concurrency: number;
  pacing: Pacing;
  modelLatencyMs: number;
  burstFraction: number;
  busyMode: BusyMode;
  durationS?: number;
  turnTimeoutMs: number;
  /** Quiet time after the last reply before the final check, so late duplicates are seen. */
  settleMs: number;
  seed: number;
  spawn?: { gateways: number; workers: number; workerEnv?: Record<string, string>; gatewayEnv?: Record<string, string> };
  target?: LoadTarget;
  outDir?: string;
  progress: boolean;
  /** Fetch the simulator's model timings and report end to end minus model time (off for shared simulators). */
  measureOverhead?: boolean;
}

export const usage = `Usage: npm run loadtest -- [options]

Replays Topical-Chat conversations through the simulator into a gateway and
checks every reply (docs/loadtest.md).

System (one of):
  --spawn                    start Postgres/Redis, a fresh database, sim, gateways and workers
    --gateways N             gateway processes (default 1); each gets its own simulator in front
    --workers M              worker processes (default 1)
  --sim-url URL              target a running simulator (its webhook must point at the gateway)
    --gateway-url URL        checked for /readyz before the run

Load:
  --transcripts FILE         transcript file (default ../shared/data/transcripts/topical-chat-valid_freq.json)
  --conversations N          conversations to replay (default 50, or unbounded with --duration-s;
                             past the file's end they repeat on new chats)
  --max-turns N              at most N turns per conversation
  --platforms LIST           comma-separated platform mix (supported: ${supportedPlatforms.join(', ')})
  --concurrency N            conversations running at once (default 10)
  --pacing P                 reply | rate:<turns/s> | think:<ms> (default reply)
  --model-latency-ms N       scripted model delay per request (default 0)
  --burst-fraction F         0..1: share of lines sent while the previous turn still runs (default 0)
  --busy-mode MODE           queue | interrupt: the workers' BUSY_INPUT_MODE, decides which replies are owed (default queue)
  --duration-s N             stop sending new lines after N seconds (conversations repeat until then)
  --turn-timeout-ms N        give up waiting for one reply after N ms (default 30000)
  --settle-ms N              quiet time before the final check (default 500)
  --seed N                   seed of the burst choice (default 1)

Output:
  --out DIR                  report directory (default .data/loadtest/<timestamp>)
  --no-progress              no progress bar (it is off anyway when stderr is not a terminal)
  --help
`;

const int = (name: string, min: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min, `${name} must be at least ${min}`);

const pacingSchema = z.string().transform((value, ctx): Pacing => {
  if (value === 'reply') return { kind: 'reply' };
  const rate = /^rate:(\d+(?:\.\d+)?)$/.exec(value);
  if (rate && Number(rate[1]) > 0) return { kind: 'rate', turnsPerSecond: Number(rate[1]) };
  const think = /^think:(\d+)$/.exec(value);
  if (think) return { kind: 'think', thinkMs: Number(think[1]) };
  ctx.addIssue({ code: z.ZodIssueCode.custom, message: `--pacing must be reply, rate:<turns/s> (> 0) or think:<ms>, not "${value}"` });
  return z.NEVER;
});

const platformsSchema = z.string().transform((value, ctx): PlatformName[] => {
  const names = value.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
  if (names.length === 0) ctx.addIssue({ code: z.ZodIssueCode.custom, message: '--platforms needs at least one platform' });
  for (const name of names) {
    const reason = unsupportedPlatformReason(name);
    if (reason) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `--platforms: ${reason}` });
  }
  return names as PlatformName[];
});

const httpUrl = (name: string) =>
  z
    .string()
    .url(`${name} must be a URL such as http://127.0.0.1:4010`)
    .refine((value) => /^https?:/.test(value), `${name} must be http(s)`)
    .transform((value) => value.replace(/\/+$/, ''));

const cliSchema = z
  .object({
    spawn: z.boolean().default(false),
    gateways: int('--gateways', 1).optional(),
    workers: int('--workers', 1).optional(),
    'sim-url': httpUrl('--sim-url').optional(),
    'gateway-url': httpUrl('--gateway-url').optional(),
    transcripts: z.string().min(1).default(defaultTranscriptPath),
    conversations: int('--conversations', 1).optional(),
    'max-turns': int('--max-turns', 1).optional(),
    platforms: platformsSchema.default('telegram'),
    concurrency: int('--concurrency', 1).default('10'),
    pacing: pacingSchema.default('reply'),
    'model-latency-ms': int('--model-latency-ms', 0).default('0'),
    'burst-fraction': z
      .string()
      .regex(/^(0(\.\d+)?|1(\.0+)?)$/, '--burst-fraction must be a number from 0 to 1')
      .transform(Number)
      .default('0'),
    'busy-mode': z.enum(['queue', 'interrupt'], { message: '--busy-mode must be queue or interrupt' }).default('queue'),
    'duration-s': int('--duration-s', 1).optional(),
    'turn-timeout-ms': int('--turn-timeout-ms', 1).default('30000'),
    'settle-ms': int('--settle-ms', 0).default('500'),
    seed: int('--seed', 0).default('1'),
    out: z.string().min(1).optional(),
    'no-progress': z.boolean().default(false),
  })
  .superRefine((value, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: z.ZodIssueCode.custom, message });
    if (value.spawn && value['sim-url']) fail('give either --spawn or --sim-url, not both');
    if (!value.spawn && !value['sim-url']) fail('give --spawn (start the whole system) or --sim-url (target a running one)');
    if (!value.spawn && (value.gateways !== undefined || value.workers !== undefined)) fail('--gateways and --workers need --spawn');
    if (value.spawn && value['gateway-url']) fail('--gateway-url targets a running system; with --spawn the gateways are started here');
  });

export type CliResult = { kind: 'help' } | { kind: 'run'; options: LoadTestOptions };

/** argv → validated options; throws an Error whose message lists every problem, one per line. */
export function parseCliOptions(argv: string[]): CliResult {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        spawn: { type: 'boolean' },
        'no-progress': { type: 'boolean' },
        ...Object.fromEntries(
          [
            'gateways', 'workers', 'sim-url', 'gateway-url', 'transcripts', 'conversations', 'max-turns', 'platforms', 'concurrency', 'pacing',
            'model-latency-ms', 'burst-fraction', 'busy-mode', 'duration-s', 'turn-timeout-ms', 'settle-ms', 'seed', 'out',
          ].map((name) => [name, { type: 'string' as const }]),
        ),
      },
    }).values;
  } catch (error) {
    throw new Error(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return { kind: 'help' };
  const parsed = cliSchema.safeParse(values);
  if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => issue.message).join('\n'));
  const v = parsed.data;
  return {
    kind: 'run',
    options: {
      transcripts: v.transcripts,
      ...(v.conversations !== undefined || v['duration-s'] === undefined ? { conversations: v.conversations ?? 50 } : {}),
      ...(v['max-turns'] !== undefined ? { maxTurns: v['max-turns'] } : {}),
      platforms: v.platforms,
      concurrency: v.concurrency,
      pacing: v.pacing,
      modelLatencyMs: v['model-latency-ms'],
      burstFraction: v['burst-fraction'],
      busyMode: v['busy-mode'],
      ...(v['duration-s'] !== undefined ? { durationS: v['duration-s'] } : {}),
      turnTimeoutMs: v['turn-timeout-ms'],
      settleMs: v['settle-ms'],
      seed: v.seed,
      ...(v.spawn ? { spawn: { gateways: v.gateways ?? 1, workers: v.workers ?? 1 } } : {}),
      ...(v['sim-url'] ? { target: { simUrl: v['sim-url'], ...(v['gateway-url'] ? { gatewayUrls: [v['gateway-url']] } : {}) } } : {}),
      ...(v.out ? { outDir: v.out } : {}),
      progress: !v['no-progress'],
    },
  };
}

/** Defaults for programmatic use (tests, the bench): only what differs needs saying. */
export function createLoadTestOptions(overrides: Partial<LoadTestOptions>): LoadTestOptions {
  return {
    transcripts: defaultTranscriptPath,
    // As on the command line: a duration alone means "repeat conversations until it ends".
    ...(overrides.durationS === undefined ? { conversations: 50 } : {}),
    platforms: ['telegram'],
    concurrency: 10,
    pacing: { kind: 'reply' },
    modelLatencyMs: 0,
    burstFraction: 0,
    busyMode: 'queue',
    turnTimeoutMs: 30_000,
    settleMs: 500,
    seed: 1,
    progress: false,
    ...overrides,
  };
}
