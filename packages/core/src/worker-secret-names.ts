/**
 * Names a Codex child never gets, whatever an operator passes through
 * (CODEX_ENV_PASSTHROUGH) or names as the model provider's key: the worker's
 * own secrets and where its data lives (issue 30, finding 1; docs/codex.md
 * "What a child gets"). Here so that the config refuses them at start and the
 * runtime drops them at spawn, from one list.
 */
const workerSecretNames = new Set([
  'DATABASE_URL',
  'DATABASE_SESSION_URL',
  'REDIS_URL',
  'REDIS_CLUSTER_NODES',
  'REDIS_SENTINELS',
  'ADMIN_TOKEN',
  'EVENT_WEBHOOK_URLS',
  'TELEGRAM_BOT_TOKEN',
  'TELEGRAM_WEBHOOK_SECRET',
  'SLACK_BOT_TOKEN',
  'SLACK_SIGNING_SECRET',
  'DISCORD_BOT_TOKEN',
  'DISCORD_PUBLIC_KEY',
  'TRANSCRIBE_API_KEY',
]);

/** True for a name no child may receive (DATABASE_URL, REDIS_URL, a bot token, ADMIN_TOKEN…). */
export function isWorkerSecretName(name: string): boolean {
  return workerSecretNames.has(name) || /^(PG|REDIS)[A-Z_]*(PASSWORD|URL)$/.test(name);
}

