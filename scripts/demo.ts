/**
 * `npm run demo`: services, migrations, simulator + gateway + worker, and a
 * terminal chat as a Telegram user. `--smoke` sends one message, prints the
 * reply and exits (non-zero with the reason if none arrives in 30 s).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { migrateDatabase } from '@switchboard/db';
import { getFreePort, repoRoot, spawnApp, waitForHttp, type ManagedProcess } from './lib/processes.ts';

const smoke = process.argv.includes('--smoke');
const botToken = '123456:demo-token';
const webhookSecret = 'demo-secret';
const chatId = 1001;
const logDir = join(repoRoot, '.data', 'demo-logs');
const started: ManagedProcess[] = [];

async function main(): Promise<void> {
  console.log('Starting Postgres and Redis (scripts/services.sh)…');
  const servicesEnv = execFileSync('bash', [join(repoRoot, 'scripts/services.sh'), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const env = readServiceEnv(servicesEnv);
  await migrateDatabase(env.DATABASE_URL);

  const [simPort, gatewayPort] = [await getFreePort(), await getFreePort()];
  const simUrl = `http://127.0.0.1:${simPort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const common = {
    ...env,
    REDIS_PREFIX: `demo${process.pid}`,
    LOG_LEVEL: 'info',
    TELEGRAM_BOT_TOKEN: botToken,
    TELEGRAM_WEBHOOK_SECRET: webhookSecret,
    TELEGRAM_API_ROOT: simUrl,
  };
  const sim = spawnApp('sim', 'apps/sim/src/main.ts', { ...common, PORT: String(simPort), SIM_TELEGRAM_WEBHOOK_URL: `${gatewayUrl}/webhooks/telegram` }, logDir);
  started.push(sim);
  await waitForHttp(`${simUrl}/control/health`, 20_000, sim);
  const gateway = spawnApp('gateway', 'apps/gateway/src/main.ts', { ...common, PORT: String(gatewayPort) }, logDir);
  started.push(gateway);
  started.push(spawnApp('worker', 'apps/worker/src/main.ts', { ...common, MODEL_BASE_URL: `${simUrl}/v1`, WORKER_PORT: '0' }, logDir));
  await waitForHttp(`${gatewayUrl}/readyz`, 20_000, gateway);
  await postJson(`${simUrl}/bot${botToken}/setWebhook`, { url: `${gatewayUrl}/webhooks/telegram`, secret_token: webhookSecret });
  await postJson(`${simUrl}/control/model/script`, { default: { type: 'echo', prefix: 'You said: ' } });

  if (smoke) {
    const reply = await chat(simUrl, 'Hello, Switchboard!', 0);
    console.log(`reply: ${reply.join('\n')}`);
    return;
  }

  console.log(`\nSwitchboard is running. Gateway ${gatewayUrl}, simulator ${simUrl}, logs in ${logDir}.`);
  console.log('You are a Telegram user in a private chat with the bot. Type a message and press Enter; Ctrl-C to stop.\n');
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  let seen = 0;
  for (;;) {
    const line = (await rl.question('you> ')).trim();
    if (!line) continue;
    const replies = await chat(simUrl, line, seen);
    seen += replies.length;
    for (const text of replies) console.log(`bot> ${text}`);
  }
}

/** Sends `text` as the demo user and returns the bot's new messages (beyond `alreadySeen`). */
async function chat(simUrl: string, text: string, alreadySeen: number): Promise<string[]> {
  await postJson(`${simUrl}/control/telegram/updates`, { chat: { id: chatId, type: 'private' }, from: { id: chatId, first_name: 'Demo' }, text });
  const response = await fetch(`${simUrl}/control/telegram/wait?chat_id=${chatId}&count=${alreadySeen + 1}&timeout_ms=30000`);
  if (!response.ok) throw new Error(`no reply within 30 s (simulator answered ${response.status}); see ${logDir}`);
  const sent = (await response.json()) as { text: string }[];
  return sent.slice(alreadySeen).map((m) => m.text);
}

async function postJson(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url.replace(/bot[^/]+/, 'bot<token>')} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

function readServiceEnv(output: string): { DATABASE_URL: string; REDIS_URL: string } {
  const pick = (name: string, fallback: string) => new RegExp(`${name}=([^\\s'"]+)`).exec(output)?.[1] ?? process.env[name] ?? fallback;
  return {
    DATABASE_URL: pick('DATABASE_URL', 'postgres://switchboard@127.0.0.1:54329/switchboard'),
    REDIS_URL: pick('REDIS_URL', 'redis://127.0.0.1:63799'),
  };
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
