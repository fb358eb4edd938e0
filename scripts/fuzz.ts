/**
 * The full fuzz run of issue 17: at least 10,000 generated payloads per
 * webhook route and at the admin API (apps/loadtest/src/fuzz), docs/guarantees.md
 * "Fuzzing"; and (issue 30) as many `pairing` cases, unpaired users' DMs on
 * every platform and the pairing admin routes, against a second system whose
 * gateway runs DM_POLICY=pairing (its rows checked too: the slot cap through
 * the run, no DM stored as input, no one paired).
 *
 *   npx tsx scripts/fuzz.ts --seed 1234            start a system of our own and fuzz it
 *   npx tsx scripts/fuzz.ts --url http://127.0.0.1:3000 --seed 1234
 *                                                  a running gateway; its secrets from the env
 *
 * --url must be loopback. With no --url: Postgres and Redis from scripts/services.sh, a throwaway
 * database, the simulator, one gateway and one worker as child processes
 * (logs in .data/fuzz-logs/), the database checked as in the e2e test: no
 * row from anything unauthenticated or invalid, one inbound event per answer
 * that claims one. With --url only the HTTP side is checked (and memory, from
 * the gateway's /metrics); the env holds SLACK_SIGNING_SECRET,
 * TELEGRAM_WEBHOOK_SECRET (+ TELEGRAM_BOT_TOKEN), DISCORD_APPLICATION_ID +
 * FUZZ_DISCORD_PRIVATE_KEY (the Ed25519 key as PKCS#8 PEM), ADMIN_TOKEN and
 * FUZZ_HOOK (`name:secret` of a hook in the gateway's HOOKS_FILE);
 * a route whose secret is absent is skipped (`hooks` always with a system of
 * our own, whose gateway has no HOOKS_FILE), and `pairing` unless the env
 * says DM_POLICY=pairing (as the gateway's does).
 *
 * The seed is printed first; the same seed sends the same cases. Exit 1 on
 * any 5xx, a violation, an unanswered request, a row where none may be, memory
 * growth past --max-rss-growth-mb, or a process that died; 2 for bad options.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { benchBotToken, benchWebhookSecret, startSystemUnderTest } from '../apps/loadtest/src/bench/system-under-test.ts';
import { readRssMiB } from '../apps/loadtest/src/bench/process-stats.ts';
import {
  createDiscordSigner,
  formatFuzzSummary,
  fuzzProblems,
  fuzzRoutes,
  mib,
  runFuzz,
  runFuzzWithRowChecks,
  type FuzzRoute,
  type FuzzTarget,
  type PhasedFuzzResult,
} from '../apps/loadtest/src/fuzz/index.ts';

/** The gateway's old-space cap in every fuzz run (the e2e test uses the same). */
const gatewayHeapOption = '--max-old-space-size=160';

const usage = `usage: npx tsx scripts/fuzz.ts [--seed N] [--count N] [--routes slack,telegram,discord,admin,pairing] [--concurrency N]
                               [--max-rss-growth-mb N] [--json FILE] [--url GATEWAY_URL]`;

function parseOptions() {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      count: { type: 'string', default: '10000' },
      routes: { type: 'string', default: fuzzRoutes.join(',') },
      concurrency: { type: 'string', default: '6' },
      'max-rss-growth-mb': { type: 'string', default: '32' },
      json: { type: 'string' },
      url: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const int = (name: string, value: string, min: number) => {
    if (!/^-?\d+$/.test(value) || Number(value) < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${value}`);
    return Number(value);
  };
  const routes = values.routes.split(',').map((r) => r.trim());
  for (const route of routes) if (!fuzzRoutes.includes(route as FuzzRoute)) throw new Error(`unknown route ${route} in --routes (${fuzzRoutes.join(', ')})`);
  return {
    help: values.help,
    seed: values.seed !== undefined ? int('seed', values.seed, -(2 ** 31)) | 0 : (Math.random() * 2 ** 31) | 0,
    count: int('count', values.count, 1),
    routes: routes as FuzzRoute[],
    concurrency: int('concurrency', values.concurrency, 1),
    maxRssGrowthBytes: int('max-rss-growth-mb', values['max-rss-growth-mb'], 1) * 1024 * 1024,
    json: values.json,
    url: values.url,
  };
}

type Options = ReturnType<typeof parseOptions>;

const perRoute = (options: Options) => Object.fromEntries(options.routes.map((route) => [route, options.count]));
const progress = (label: string) => {
  let shown = 0;
  return (done: number, total: number) => {
    if (done === total || done - shown >= Math.max(1000, total / 10)) {
      shown = done;
      console.error(`fuzz: ${label} ${done}/${total}`);
    }
  };
};

async function againstRunningGateway(options: Options): Promise<number> {
  // Like the load tester (apps/loadtest/README.md): hostile traffic goes to loopback only, never to a deployment by a typo.
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(options.url as string).hostname)) {
    console.error(`fuzz: --url must be a loopback address, got ${options.url}`);
    return 2;
  }
  const env = process.env;
  const discordKey = env.FUZZ_DISCORD_PRIVATE_KEY ? createPrivateKey(env.FUZZ_DISCORD_PRIVATE_KEY) : undefined;
  const target: FuzzTarget = {
    baseUrl: options.url as string,
    ...(env.SLACK_SIGNING_SECRET ? { slack: { signingSecret: env.SLACK_SIGNING_SECRET } } : {}),
    ...(env.TELEGRAM_WEBHOOK_SECRET ? { telegram: { webhookSecret: env.TELEGRAM_WEBHOOK_SECRET, botId: env.TELEGRAM_BOT_TOKEN?.split(':')[0] } } : {}),
    ...(discordKey && env.DISCORD_APPLICATION_ID ? { discord: { applicationId: env.DISCORD_APPLICATION_ID, sign: createDiscordSigner(discordKey) } } : {}),
    ...(env.ADMIN_TOKEN ? { admin: { tokens: parseTokens(env.ADMIN_TOKEN) } } : {}),
    ...(env.BODY_LIMIT_BYTES ? { bodyLimitBytes: Number(env.BODY_LIMIT_BYTES) } : {}),
    // The `pairing` route only means something against a gateway that asks unknown users to pair.
    ...(env.DM_POLICY === 'pairing' ? { pairing: { maxPendingPerPlatform: pairingCap } } : {}),
    // `name:secret` of a hook in the gateway's HOOKS_FILE (the `hooks` route, issue 34); its calls store input in the hook's conversation.
    ...(env.FUZZ_HOOK?.includes(':') ? { hooks: { name: env.FUZZ_HOOK.slice(0, env.FUZZ_HOOK.indexOf(':')), secret: env.FUZZ_HOOK.slice(env.FUZZ_HOOK.indexOf(':') + 1) } } : {}),
  };
  const summary = await runFuzz({ target, seed: options.seed, perRoute: perRoute(options), concurrency: options.concurrency, onProgress: progress('sent') });
  console.log(formatFuzzSummary(summary));
  if (options.json) writeFileSync(options.json, `${JSON.stringify(summary, null, 2)}\n`);
  const problems = fuzzProblems(summary);
  for (const problem of problems) console.log(`FAIL ${problem}`);
  return problems.length === 0 ? 0 : 1;
}

function parseTokens(raw: string): { name: string; token: string }[] {
  return raw.split(',').map((entry) => {
    const colon = entry.indexOf(':');
    return colon === -1 ? { name: 'admin', token: entry.trim() } : { name: entry.slice(0, colon).trim(), token: entry.slice(colon + 1).trim() };
  });
}

/**
 * With a system of our own: the open routes against a gateway with the default DM_POLICY=open, then
 * (issue 30) the `pairing` route against a second system whose gateway runs DM_POLICY=pairing.
 */
async function withOwnSystem(options: Options): Promise<number> {
  const openRoutes = options.routes.filter((route) => route !== 'pairing');
  const problems: string[] = [];
  if (openRoutes.length > 0) problems.push(...(await fuzzOwnSystem(options, { routes: openRoutes, pairing: false })));
  if (options.routes.includes('pairing')) problems.push(...(await fuzzOwnSystem(options, { routes: ['pairing'], pairing: true })).map((p) => `DM_POLICY=pairing: ${p}`));
  for (const problem of problems) console.log(`FAIL ${problem}`);
  console.log(problems.length === 0 ? `fuzz: passed (seed ${options.seed})` : `fuzz: FAILED (seed ${options.seed})`);
  return problems.length === 0 ? 0 : 1;
}

/** The pairing slot cap (packages/core pairingRules.maxPendingPerPlatform), checked through the run. */
const pairingCap = 3;

async function fuzzOwnSystem(options: Options, run: { routes: FuzzRoute[]; pairing: boolean }): Promise<string[]> {
  const discordKeys = generateKeyPairSync('ed25519');
  const publicKeyHex = Buffer.from((discordKeys.publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url').toString('hex');
  const slackSigningSecret = 'fuzz-slack-signing-secret';
  const adminTokens = [
    { name: 'alice', token: 'alice-fuzz-0123456789abcdef' },
    { name: 'bob', token: 'bob-fuzz-fedcba9876543210' },
  ];
  const applicationId = '1400000000000000077';
  console.error(`fuzz: starting Postgres/Redis, the simulator, a gateway${run.pairing ? ' with DM_POLICY=pairing' : ''} and a worker`);
  const system = await startSystemUnderTest(`fuzz-${options.seed >>> 0}${run.pairing ? '-pairing' : ''}`, {
    workers: 1,
    platforms: ['slack'],
    logRoot: 'fuzz-logs',
    gatewayEnv: {
      SLACK_SIGNING_SECRET: slackSigningSecret,
      DISCORD_PUBLIC_KEY: publicKeyHex,
      DISCORD_APPLICATION_ID: applicationId,
      ADMIN_TOKEN: adminTokens.map((t) => `${t.name}:${t.token}`).join(','),
      // Machine speed, far past a person's pace: the per-user courtesy limit would answer most with a notice.
      USER_RATE_LIMIT_PER_MINUTE: '0',
      // A container-sized heap: garbage cannot pile up for minutes and pass for growth, and a leak ends the process.
      NODE_OPTIONS: gatewayHeapOption,
      ...(run.pairing ? { DM_POLICY: 'pairing' } : {}),
    },
  });
  const sql = postgres(system.databaseUrl, { max: 2, onnotice: () => undefined });
  try {
    const target: FuzzTarget = {
      baseUrl: system.gatewayUrl,
      slack: { signingSecret: slackSigningSecret },
      telegram: { webhookSecret: benchWebhookSecret, botId: benchBotToken.split(':')[0] },
      discord: { applicationId, sign: createDiscordSigner(discordKeys.privateKey as KeyObject) },
      admin: { tokens: adminTokens },
      ...(run.pairing ? { pairing: { maxPendingPerPlatform: pairingCap } } : {}),
    };
    const gateway = system.gateways[0];
    const worker = system.workers[0];
    const workerRssBefore = worker?.child.pid ? readRssMiB(worker.child.pid) : undefined;
    const result = await runFuzzWithRowChecks({
      target,
      sql,
      seed: options.seed,
      perRoute: Object.fromEntries(run.routes.map((route) => [route, options.count])),
      concurrency: options.concurrency,
      maxRssGrowthBytes: options.maxRssGrowthBytes,
      onProgress: progress(run.pairing ? 'sent (DM_POLICY=pairing)' : 'sent'),
    });
    const workerRssMiB = { before: workerRssBefore, after: worker?.child.pid ? readRssMiB(worker.child.pid) : undefined };
    printOwnSystemResult(result, workerRssMiB);
    const problems = [...result.problems];
    if (gateway && gateway.child.exitCode !== null) problems.push(`the gateway exited with ${gateway.child.exitCode}`);
    if (worker && worker.child.exitCode !== null) problems.push(`the worker exited with ${worker.child.exitCode}`);
    if (options.json) writeFileSync(run.pairing ? options.json.replace(/(\.json)?$/, '-pairing.json') : options.json, `${JSON.stringify({ ...result, workerRssMiB }, null, 2)}\n`);
    return problems;
  } finally {
    await sql.end({ timeout: 5 });
    await system.close();
  }
}

function printOwnSystemResult(result: PhasedFuzzResult, workerRssMiB: { before: number | undefined; after: number | undefined }): void {
  console.log(formatFuzzSummary(result.refused, 'phase 1, unauthenticated and invalid'));
  console.log(formatFuzzSummary(result.authentic, 'phase 2, authentic'));
  console.log(`rows: before ${JSON.stringify(result.rows.beforeRefused)}`);
  console.log(`      after phase 1 ${JSON.stringify(result.rows.afterRefused)}`);
  console.log(`      after phase 2 ${JSON.stringify(result.rows.afterAuthentic)}`);
  console.log(`      inbound events claimed ${result.rows.inboundClaimed}, written ${result.rows.inboundWritten}; audit rows by unknown actors ${result.rows.auditRowsByStrangers}`);
  if (result.pairing) console.log(`pairing: rows by platform and status ${JSON.stringify(result.pairing.byStatus)}; most codes pending at once on one platform ${result.pairing.maxPendingSeen} (cap ${pairingCap}, ${result.pairing.probes} readings)`);
  const rss = (bytes: number | undefined) => (bytes === undefined ? '?' : `${mib(bytes)} MiB`);
  console.log(`gateway RSS: at the start ${rss(result.rss.atStart)}, peak ${rss(result.rss.peak)}, at the end ${rss(result.rss.atEnd)}; drift ${rss(result.rss.driftRefused)} (phase 1), ${rss(result.rss.driftAuthentic)} (phase 2)`);
  console.log(`worker RSS: ${workerRssMiB.before?.toFixed(1) ?? '?'} MiB before, ${workerRssMiB.after?.toFixed(1) ?? '?'} MiB after`);
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseOptions();
  } catch (error) {
    console.error(`fuzz: ${(error as Error).message}\n${usage}`);
    return 2;
  }
  if (options.help) {
    console.log(usage);
    return 0;
  }
  console.log(`fuzz: seed ${options.seed}, ${options.count} cases per route (${options.routes.join(', ')}), ${options.concurrency} in flight`);
  return options.url ? againstRunningGateway(options) : withOwnSystem(options);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`fuzz failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(2);
  },
);
