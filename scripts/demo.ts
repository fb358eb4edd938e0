/**
 * `npm run demo`: services, migrations, simulator + gateway + worker, and a
 * terminal chat as a user of the chosen platform (`--platform telegram|slack|discord`,
 * asked for when omitted on a terminal). `--smoke` sends one message, prints
 * the reply and exits (non-zero with the reason if none arrives in 30 s).
 * The admin console gets a fresh token each run, printed with its URL; the
 * model is the simulator's, scripted by demo-model.ts, or a real one when
 * MODEL_BASE_URL and MODEL_API_KEY are set. `--runtime codex` runs the turns
 * on the Codex runtime against the fake app-server (scripts/lib/demo-runtime.ts).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { streamCursor } from '@switchboard/core';
import { migrateDatabase } from '@switchboard/db';
import { getFreePort, readCommandLine, repoRoot, spawnApp, waitForHttp, type ManagedProcess } from '@switchboard/harness';
import { chooseDemoModel, realModelDefaultName } from './lib/demo-model.ts';
import { demoChats, postJson, type DemoPlatform } from './lib/demo-platforms.ts';
import { chooseDemoRuntime, parseDemoRuntime } from './lib/demo-runtime.ts';

const usage = `Usage: npm run demo -- [--platform telegram|slack|discord] [--runtime openai|codex] [--smoke]

Starts Postgres and Redis (scripts/services.sh), migrates, runs the simulator,
a gateway and a worker, and opens a terminal chat as a user of the platform
(asked for when omitted on a terminal; telegram otherwise). Prints the admin
console's URL and a fresh admin token for this run.

  --platform NAME  chat as a telegram, slack or discord user
  --runtime NAME   openai (default) or codex: AGENT_RUNTIME=codex against the fake
                   Codex app-server of apps/sim (or CODEX_COMMAND when set; docs/codex.md)
  --smoke          send one message, print the reply and exit (1 if none in 30 s)
  --help           print this and exit

The model is the simulator's, scripted for the demo: ask it the time (it calls
the current_time tool) or for a long story (it streams a longer answer). With
MODEL_BASE_URL and MODEL_API_KEY set (and MODEL_NAME, default ${realModelDefaultName}),
the worker talks to that OpenAI-compatible model instead.
`;

const args = readCommandLine({ smoke: { type: 'boolean', default: false }, platform: { type: 'string' }, runtime: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } }, usage);
const logDir = join(repoRoot, '.data', 'demo-logs');
const started: ManagedProcess[] = [];

async function choosePlatform(): Promise<DemoPlatform> {
  const given = args.platform ?? (args.smoke || !process.stdin.isTTY ? 'telegram' : undefined);
  if (given) {
    if (!(given in demoChats)) throw new Error(`--platform must be telegram, slack or discord (got "${given}")`);
    return given as DemoPlatform;
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const answer = (await rl.question('Chat as a user of which platform? [telegram/slack/discord] (telegram) ')).trim().toLowerCase() || 'telegram';
  rl.close();
  if (!(answer in demoChats)) throw new Error(`unknown platform "${answer}"`);
  return answer as DemoPlatform;
}

async function main(): Promise<void> {
  const runtime = chooseDemoRuntime(parseDemoRuntime(args.runtime), repoRoot, join(repoRoot, '.data'), process.env);
  // The sandbox binds only paths that exist: the fake's state and log directories are made before its first child,
  // writable by any uid (a root worker's children run as their conversations' own: docs/codex.md, "The child's user").
  for (const path of (runtime.env.CODEX_SANDBOX_WRITE_PATHS ?? '').split(',').filter(Boolean)) {
    mkdirSync(path, { recursive: true });
    chmodSync(path, 0o1777);
  }
  const platform = await choosePlatform();
  const chat = demoChats[platform];
  console.log('Starting Postgres and Redis (scripts/services.sh)…');
  const servicesEnv = execFileSync('bash', [join(repoRoot, 'scripts/services.sh'), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const pick = (name: string, fallback: string) => new RegExp(`${name}=([^\\s'"]+)`).exec(servicesEnv)?.[1] ?? fallback;
  const env = {
    DATABASE_URL: pick('DATABASE_URL', 'postgres://switchboard@127.0.0.1:54329/switchboard'),
    REDIS_URL: pick('REDIS_URL', 'redis://127.0.0.1:63799'),
    REDIS_PREFIX: `demo${process.pid}`,
    LOG_LEVEL: 'info',
  };
  await migrateDatabase(env.DATABASE_URL);

  const [simPort, gatewayPort] = [await getFreePort(), await getFreePort()];
  const simUrl = `http://127.0.0.1:${simPort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const sim = spawnApp('sim', 'apps/sim/src/main.ts', { ...env, ...chat.simEnv, PORT: String(simPort) }, logDir);
  started.push(sim);
  await waitForHttp(`${simUrl}/control/health`, 60_000, sim);
  const platformEnv = await chat.env(simUrl);
  // A fresh token each run: the console is reachable from this machine only, and only for this run.
  const adminToken = randomBytes(18).toString('base64url');
  const model = chooseDemoModel(process.env, simUrl);
  const gateway = spawnApp('gateway', 'apps/gateway/src/main.ts', { ...env, ...platformEnv, PORT: String(gatewayPort), ADMIN_TOKEN: adminToken, AGENT_RUNTIME: runtime.env.AGENT_RUNTIME ?? 'openai' }, logDir);
  started.push(gateway);
  started.push(spawnApp('worker', 'apps/worker/src/main.ts', { ...env, ...platformEnv, ...model.workerEnv, ...runtime.env, WORKER_PORT: '0' }, logDir));
  await waitForHttp(`${gatewayUrl}/readyz`, 60_000, gateway);
  await chat.connect(simUrl, gatewayUrl);
  if (model.simScript) await postJson(`${simUrl}/control/model/script`, model.simScript);
  // A Codex conversation's turns never reach the chat-completions model: name what answers.
  console.log(runtime.env.AGENT_RUNTIME === 'codex' ? `Runtime: ${runtime.description}.` : `Model: ${model.description}.`);
  console.log(`Admin console: ${gatewayUrl}/admin/ (token ${adminToken})`);

  let seen = 0;
  const say = async (text: string) => {
    await chat.send(simUrl, text);
    let replies = (await chat.waitForReplies(simUrl, seen + 1)).slice(seen);
    // A slow answer streams (STREAMING): its message grows in place, ending in the cursor until it is complete; print it complete.
    for (let waited = 0; replies.some((reply) => reply.endsWith(streamCursor)) && waited < 60_000; waited += 200) {
      await sleep(200);
      replies = (await chat.waitForReplies(simUrl, seen + 1)).slice(seen);
    }
    seen += replies.length;
    return replies;
  };

  if (args.smoke) {
    console.log(`reply: ${(await say('Hello, Switchboard!')).join('\n')}`);
    return;
  }
  console.log(`\nSwitchboard is running on ${platform}. Gateway ${gatewayUrl}, simulator ${simUrl}, logs in ${logDir}.`);
  console.log(`You are a ${platform} user in a direct chat with the bot (try /help). Type and press Enter; Ctrl-C stops everything.\n`);
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  for (;;) {
    const line = (await rl.question('you> ')).trim();
    if (!line) continue;
    for (const text of await say(line)) console.log(`bot> ${text}`);
  }
}

async function stopAll(): Promise<void> {
  await Promise.all(started.reverse().map((p) => p.stop()));
}

process.once('SIGINT', () => {
  console.log('\nStopping…');
  void stopAll().then(() => process.exit(0));
});

main()
  .then(async () => {
    await stopAll();
    process.exit(0);
  })
  .catch(async (error: unknown) => {
    console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    await stopAll();
    process.exit(1);
  });
