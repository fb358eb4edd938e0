import { loadConfigOrExit, simEnvSchema } from '@switchboard/config';
import { createLogger } from '@switchboard/logger';
import { createSim } from './index.ts';

// Entry point for `npm run start:sim`: configured only by the environment.
const config = loadConfigOrExit(simEnvSchema);
const log = createLogger('sim-main', config.LOG_LEVEL);

const sim = await createSim({
  telegramBotToken: config.TELEGRAM_BOT_TOKEN,
  telegramWebhookUrl: config.SIM_TELEGRAM_WEBHOOK_URL,
  telegramWebhookSecret: config.TELEGRAM_WEBHOOK_SECRET,
  slackSigningSecret: config.SLACK_SIGNING_SECRET,
  slackBotToken: config.SLACK_BOT_TOKEN,
  slackEventsUrl: config.SIM_SLACK_EVENTS_URL,
  discordBotToken: config.DISCORD_BOT_TOKEN,
  discordApplicationId: config.DISCORD_APPLICATION_ID,
  discordInteractionsUrl: config.SIM_DISCORD_INTERACTIONS_URL,
  logLevel: config.LOG_LEVEL,
});

try {
  const url = await sim.listen(config.PORT, config.HOST);
  log.info(
    { url, telegramApiRoot: url, slackApiUrl: `${url}/api/`, modelBaseUrl: `${url}/v1`, webhook: config.SIM_TELEGRAM_WEBHOOK_URL ?? null, slackEvents: config.SIM_SLACK_EVENTS_URL ?? null },
    `simulator listening on ${url}`,
  );
  // The key pair is made at start: the gateway's DISCORD_PUBLIC_KEY must be this run's key.
  log.info({ discordApiUrl: `${url}/api`, discordPublicKey: sim.state.discord.store.publicKeyHex }, 'simulated Discord: give the gateway this DISCORD_PUBLIC_KEY');
} catch (error) {
  log.fatal({ err: error }, 'simulator failed to start');
  process.exit(1);
}

let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'simulator stopping');
  sim.close().then(
    () => process.exit(0),
    (error: unknown) => {
      log.error({ err: error }, 'simulator did not close cleanly');
      process.exit(1);
    },
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
