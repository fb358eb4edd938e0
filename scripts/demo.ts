/**
 * `npm run demo`: services, migrations, simulator + gateway + worker, and a
 * terminal chat as a user of the chosen platform (`--platform telegram|slack|discord`,
 * asked for when omitted on a terminal). `--smoke` sends one message, prints
 * the reply and exits (non-zero with the reason if none arrives in 30 s).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { migrateDatabase } from '@switchboard/db';
import { demoChats, postJson, type DemoPlatform } from './lib/demo-platforms.ts';
import { getFreePort, repoRoot, spawnApp, waitForHttp, type ManagedProcess } from './lib/processes.ts';

const { values: args } = parseArgs({ options: { smoke: { type: 'boolean', default: false }, platform: { type: 'string' } } });
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
  const gateway = spawnApp('gateway', 'apps/gateway/src/main.ts', { ...env, ...platformEnv, PORT: String(gatewayPort) }, logDir);
  started.push(gateway);
  started.push(spawnApp('worker', 'apps/worker/src/main.ts', { ...env, ...platformEnv, MODEL_BASE_URL: `${simUrl}/v1`, WORKER_PORT: '0' }, logDir));
  await waitForHttp(`${gatewayUrl}/readyz`, 60_000, gateway);
  await chat.connect(simUrl, gatewayUrl);
  await postJson(`${simUrl}/control/model/script`, { default: { type: 'echo', prefix: 'You said: ' } });

  let seen = 0;
  const say = async (text: string) => {
    await chat.send(simUrl, text);
    const replies = (await chat.waitForReplies(simUrl, seen + 1)).slice(seen);
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
