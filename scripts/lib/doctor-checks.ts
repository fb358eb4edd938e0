import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GrammyError, HttpError, Api } from 'grammy';
import postgres from 'postgres';
import type { z } from 'zod';
import { ConfigError, gatewayEnvSchema, loadHooksFile, parseConfig, readSchemaShape, workerEnvSchema } from '@switchboard/config';
import { migrationsFolder } from '@switchboard/db';
import { createSlackClient, fetchSlackAuthInfo, PlatformError } from '@switchboard/platforms';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  /** What was found. */
  detail: string;
  /** What to do about it (fail and warn). */
  fix?: string;
}

const timeoutMs = 5000;

const fields: Record<string, z.ZodTypeAny> = { ...readSchemaShape(gatewayEnvSchema), ...readSchemaShape(workerEnvSchema) };

/** The field schemas of an env schema, under any refinements wrapped around it. */
/**
 * One variable, parsed by its own field schema (defaults included), so one bad
 * variable does not stop the checks that do not need it.
 */
export function readSetting<T = string>(env: NodeJS.ProcessEnv, name: string): T | undefined {
  const schema = fields[name];
  if (!schema) return env[name] as T | undefined;
  const parsed = schema.safeParse(env[name]);
  return parsed.success ? (parsed.data as T) : undefined;
}

/**
 * Who may talk to the bot (issue 30, finding 6): GROUP_POLICY=open set by
 * hand beside a closed DM_POLICY lets a stranger who creates a group and adds
 * the bot do what a direct message would refuse them. Allowed (an operator
 * may want open groups), so a warning, not a failure.
 */
export function checkAccess(env: NodeJS.ProcessEnv): CheckResult {
  const dm = env.DM_POLICY?.trim() || 'open';
  const group = env.GROUP_POLICY?.trim();
  if (dm !== 'open' && group === 'open') {
    return {
      name: 'access',
      status: 'warn',
      detail: `GROUP_POLICY=open while DM_POLICY=${dm}: anyone who adds the bot to a group can talk to it there, strangers included`,
      fix: 'unset GROUP_POLICY (it then follows DM_POLICY) or set GROUP_POLICY=allowlist, unless open groups are meant',
    };
  }
  return { name: 'access', status: 'ok', detail: `DM_POLICY=${dm}, GROUP_POLICY=${group || `${dm === 'open' ? 'open' : 'allowlist'} (following DM_POLICY)`}` };
}

/**
 * Triggered turns (docs/tools.md): HOOKS_FILE read as the gateway reads it at
 * start, so a bad entry is found before the gateway refuses to start. Names
 * only, never a secret. Whether each conversation exists is the gateway's to
 * say per call (409), since conversations come and go.
 */
export function checkHooks(env: NodeJS.ProcessEnv): CheckResult {
  const path = readSetting(env, 'HOOKS_FILE');
  if (!path) return { name: 'hooks', status: 'skip', detail: 'off (no HOOKS_FILE): no /hooks route' };
  try {
    const hooks = loadHooksFile(path);
    return { name: 'hooks', status: 'ok', detail: `${hooks.length} hook${hooks.length === 1 ? '' : 's'} in ${path}: ${hooks.map((hook) => hook.name).join(', ') || 'none'}` };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { name: 'hooks', status: 'fail', detail: error.message.replaceAll('Invalid configuration: ', '').split('\n').join('; '), fix: 'fix HOOKS_FILE (docs/tools.md, "Triggered turns"); the gateway refuses to start with it' };
  }
}

export function checkConfig(env: NodeJS.ProcessEnv): CheckResult[] {
  const schemas = [
    ['config (gateway)', gatewayEnvSchema],
    ['config (worker)', workerEnvSchema],
  ] as const;
  return schemas.map(([name, schema]) => {
    try {
      parseConfig(schema, env);
      return { name, status: 'ok', detail: 'every variable is valid' };
    } catch (error) {
      return { name, status: 'fail', detail: (error as Error).message, fix: 'correct the variables named (README, Environment)' };
    }
  });
}

export async function checkPostgres(env: NodeJS.ProcessEnv): Promise<CheckResult[]> {
  const url = readSetting(env, 'DATABASE_URL');
  if (!url) return [{ name: 'postgres', status: 'skip', detail: 'DATABASE_URL is invalid' }, { name: 'migrations', status: 'skip', detail: 'DATABASE_URL is invalid' }];
  const sql = postgres(url, { max: 1, connect_timeout: timeoutMs / 1000, onnotice: () => undefined });
  try {
    let version: string;
    try {
      const [row] = await sql<{ server_version: string }[]>`show server_version`;
      version = row?.server_version ?? 'unknown';
    } catch (error) {
      return [
        { name: 'postgres', status: 'fail', detail: `cannot reach ${describeUrl(url)}: ${(error as Error).message}`, fix: 'start Postgres (npm run services -- start) or correct DATABASE_URL' },
        { name: 'migrations', status: 'skip', detail: 'Postgres is unreachable' },
      ];
    }
    return [{ name: 'postgres', status: 'ok', detail: `PostgreSQL ${version} at ${describeUrl(url)}` }, await checkMigrations(sql)];
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/**
 * DATABASE_SESSION_URL, when set: the direct connection the session locks
 * and migrations use behind a transaction pooler (docs/services.md, "Postgres
 * behind PgBouncer"). A session URL that answers as a pooler's would not hold
 * a lock across calls, which Postgres cannot tell us, so only reachability is checked.
 */
export async function checkPostgresSession(env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const name = 'postgres (session)';
  if (!env.DATABASE_SESSION_URL) return { name, status: 'skip', detail: 'DATABASE_SESSION_URL unset: session locks and migrations use DATABASE_URL' };
  const url = readSetting(env, 'DATABASE_SESSION_URL');
  if (!url) return { name, status: 'fail', detail: 'DATABASE_SESSION_URL is invalid', fix: 'set a postgres:// URL of Postgres itself (not the pooler)' };
  const sql = postgres(url, { max: 1, connect_timeout: timeoutMs / 1000, onnotice: () => undefined });
  try {
    await sql`select 1`;
    return { name, status: 'ok', detail: `direct connection at ${describeUrl(url)}` };
  } catch (error) {
    return { name, status: 'fail', detail: `cannot reach ${describeUrl(url)}: ${(error as Error).message}`, fix: 'correct DATABASE_SESSION_URL: Postgres itself, not the pooler' };
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/**
 * Compares migrations/meta/_journal.json with drizzle's bookkeeping table
 * (drizzle.__drizzle_migrations: one row per applied file, created_at = the
 * journal's `when`, hash = SHA-256 of the SQL file), the way drizzle's
 * migrate() decides what to apply.
 */
async function checkMigrations(sql: postgres.Sql): Promise<CheckResult> {
  const name = 'migrations';
  const journal = JSON.parse(await readFile(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string; when: number }[] };
  const files = await Promise.all(
    journal.entries.map(async (entry) => ({ ...entry, hash: createHash('sha256').update(await readFile(join(migrationsFolder, `${entry.tag}.sql`), 'utf8')).digest('hex') })),
  );
  let applied: { hash: string; created_at: string }[];
  try {
    applied = await sql<{ hash: string; created_at: string }[]>`select hash, created_at::text from drizzle.__drizzle_migrations order by created_at`;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '42P01' || code === '3F000') return { name, status: 'fail', detail: `none of ${files.length} applied (no drizzle.__drizzle_migrations table)`, fix: 'run npm run db:migrate' };
    throw error;
  }
  const lastApplied = applied.length > 0 ? Math.max(...applied.map((row) => Number(row.created_at))) : 0;
  const pending = files.filter((file) => file.when > lastApplied);
  const appliedHashes = new Set(applied.map((row) => row.hash));
  const changed = files.filter((file) => file.when <= lastApplied && !appliedHashes.has(file.hash));
  const latestKnown = files.at(-1)?.when ?? 0;
  if (pending.length > 0) {
    return { name, status: 'fail', detail: `${pending.length} of ${files.length} not applied: ${pending.map((file) => file.tag).join(', ')}`, fix: 'run npm run db:migrate' };
  }
  if (lastApplied > latestKnown) {
    return { name, status: 'fail', detail: 'the database has migrations newer than this checkout', fix: 'deploy the code that matches the database, or check DATABASE_URL' };
  }
  if (changed.length > 0) {
    return { name, status: 'warn', detail: `applied files changed since: ${changed.map((file) => file.tag).join(', ')}`, fix: 'never edit an applied migration; add a new one (npm run db:generate)' };
  }
  return { name, status: 'ok', detail: `all ${files.length} applied (latest ${files.at(-1)?.tag ?? 'none'})` };
}

/** getMe (the token), then getWebhookInfo (is Telegram sending updates where TELEGRAM_MODE expects them?). */
export async function checkTelegram(env: NodeJS.ProcessEnv): Promise<CheckResult[]> {
  const name = 'telegram';
  const webhookName = 'webhook (telegram)';
  const token = readSetting(env, 'TELEGRAM_BOT_TOKEN');
  if (!token) return [{ name, status: 'skip', detail: 'off (no TELEGRAM_BOT_TOKEN)' }];
  const apiRoot = (readSetting(env, 'TELEGRAM_API_ROOT') ?? 'https://api.telegram.org').replace(/\/+$/, '');
  const api = new Api(token, { apiRoot, timeoutSeconds: timeoutMs / 1000 });
  try {
    const me = await api.getMe();
    const mode = readSetting(env, 'TELEGRAM_MODE') ?? 'webhook';
    return [{ name, status: 'ok', detail: `getMe: @${me.username} (id ${me.id}) at ${apiRoot}` }, judgeWebhook(webhookName, mode, await api.getWebhookInfo())];
  } catch (error) {
    const skipped: CheckResult = { name: webhookName, status: 'skip', detail: 'the Bot API did not answer getMe' };
    if (error instanceof GrammyError) {
      return [{ name, status: 'fail', detail: `${error.method} refused: ${error.error_code} ${error.description}`, fix: 'check TELEGRAM_BOT_TOKEN (the token @BotFather gave)' }, skipped];
    }
    const reason = error instanceof HttpError ? error.message : (error as Error).message;
    return [{ name, status: 'fail', detail: `cannot reach ${apiRoot}: ${reason}`, fix: 'check TELEGRAM_API_ROOT and the network' }, skipped];
  }
}

const webhookPath = '/webhooks/telegram';
const setWebhookFix = `setWebhook to https://<gateway>${webhookPath} with secret_token = TELEGRAM_WEBHOOK_SECRET (README, "Telegram")`;

/**
 * In webhook mode Telegram must post to the gateway's /webhooks/telegram; in
 * polling mode no webhook may be set (getUpdates is refused while one is).
 * The last delivery error Telegram reports is the usual reason a bot is silent.
 */
export function judgeWebhook(name: string, mode: string, info: { url?: string; pending_update_count: number; last_error_date?: number; last_error_message?: string }): CheckResult {
  const pending = `${info.pending_update_count} update${info.pending_update_count === 1 ? '' : 's'} pending`;
  if (mode === 'polling') {
    if (info.url) return { name, status: 'warn', detail: `TELEGRAM_MODE=polling but a webhook is set (${info.url}), and getUpdates is refused while it is`, fix: 'deleteWebhook, or set TELEGRAM_MODE=webhook' };
    return { name, status: 'ok', detail: `no webhook set (polling), ${pending}` };
  }
  if (!info.url) return { name, status: 'warn', detail: 'no webhook set: Telegram sends this bot no updates', fix: setWebhookFix };
  if (!pathOf(info.url).endsWith(webhookPath)) {
    return { name, status: 'warn', detail: `the webhook is ${info.url}, not the gateway's ${webhookPath}`, fix: setWebhookFix };
  }
  if (info.last_error_message) {
    const when = info.last_error_date ? new Date(info.last_error_date * 1000).toISOString() : 'unknown time';
    return { name, status: 'warn', detail: `${info.url}, ${pending}; last delivery error at ${when}: ${info.last_error_message}`, fix: 'make that URL reach the gateway over HTTPS (a public address, a valid certificate), then check again' };
  }
  return { name, status: 'ok', detail: `${info.url}, ${pending}` };
}

function pathOf(raw: string): string {
  try {
    return new URL(raw).pathname.replace(/\/+$/, '');
  } catch {
    return raw;
  }
}

/**
 * One `GET {MODEL_BASE_URL}/models`: the sim and OpenAI-compatible servers
 * answer it without spending tokens, and it checks the address and the key.
 */
export async function checkModel(env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const name = 'model';
  const baseUrl = readSetting(env, 'MODEL_BASE_URL');
  if (!baseUrl) return { name, status: 'skip', detail: 'MODEL_BASE_URL is invalid' };
  const modelName = readSetting(env, 'MODEL_NAME') ?? 'switchboard-sim';
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${readSetting(env, 'MODEL_API_KEY') ?? ''}` }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const reason = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
    return { name, status: 'fail', detail: `cannot reach ${describeUrl(baseUrl)}: ${reason}`, fix: 'start the model server or correct MODEL_BASE_URL (an OpenAI-compatible base URL, e.g. https://api.openai.com/v1)' };
  }
  if (response.status === 401 || response.status === 403) {
    return { name, status: 'fail', detail: `GET /models refused: ${response.status}`, fix: 'check MODEL_API_KEY' };
  }
  if (!response.ok) {
    return { name, status: 'warn', detail: `GET /models answered ${response.status} at ${describeUrl(baseUrl)}`, fix: 'check MODEL_BASE_URL (it ends before /chat/completions, usually in /v1)' };
  }
  const listed = ((await response.json().catch(() => ({}))) as { data?: { id?: unknown }[] }).data?.map((model) => String(model.id)) ?? [];
  if (listed.length > 0 && !listed.includes(modelName)) {
    return { name, status: 'warn', detail: `${describeUrl(baseUrl)} answers, but does not list MODEL_NAME ${modelName} (${listed.length} models)`, fix: `set MODEL_NAME to a listed model, e.g. ${listed.slice(0, 3).join(', ')}` };
  }
  return { name, status: 'ok', detail: `GET /models at ${describeUrl(baseUrl)}: ${listed.length > 0 ? `lists ${modelName}` : 'answered'}` };
}

export async function checkSlack(env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const name = 'slack';
  const token = readSetting(env, 'SLACK_BOT_TOKEN');
  const signingSecret = readSetting(env, 'SLACK_SIGNING_SECRET');
  if (!token) {
    if (signingSecret) return { name, status: 'warn', detail: 'SLACK_SIGNING_SECRET is set but SLACK_BOT_TOKEN is not', fix: 'set SLACK_BOT_TOKEN (xoxb-…) or replies cannot be sent' };
    return { name, status: 'skip', detail: 'off (no SLACK_BOT_TOKEN)' };
  }
  const apiUrl = readSetting(env, 'SLACK_API_URL') ?? 'https://slack.com/api/';
  try {
    const me = await fetchSlackAuthInfo(await createSlackClient({ token, apiUrl, timeoutMs }));
    if (!signingSecret) return { name, status: 'warn', detail: `auth.test: team ${me.teamId}, bot user ${me.userId}; no SLACK_SIGNING_SECRET`, fix: 'set SLACK_SIGNING_SECRET or the gateway takes no Slack events' };
    return { name, status: 'ok', detail: `auth.test: team ${me.teamId}, bot user ${me.userId}` };
  } catch (error) {
    const rejected = error instanceof PlatformError && error.code === 'REJECTED';
    return rejected
      ? { name, status: 'fail', detail: `auth.test refused: ${error.message}`, fix: 'check SLACK_BOT_TOKEN (the Bot User OAuth Token, xoxb-…)' }
      : { name, status: 'fail', detail: `auth.test failed at ${apiUrl}: ${(error as Error).message}`, fix: 'check SLACK_API_URL and the network' };
  }
}

export async function checkDiscord(env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const name = 'discord';
  const token = readSetting(env, 'DISCORD_BOT_TOKEN');
  if (!token) return { name, status: 'skip', detail: 'off (no DISCORD_BOT_TOKEN)' };
  const apiUrl = (readSetting(env, 'DISCORD_API_URL') ?? 'https://discord.com/api').replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetch(`${apiUrl}/v10/users/@me`, { headers: { authorization: `Bot ${token}` }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    return { name, status: 'fail', detail: `cannot reach ${apiUrl}: ${(error as Error).message}`, fix: 'check DISCORD_API_URL and the network' };
  }
  if (response.status === 401) return { name, status: 'fail', detail: 'GET /users/@me refused: 401 Unauthorized', fix: 'check DISCORD_BOT_TOKEN (Developer Portal, Bot, Reset Token)' };
  if (!response.ok) return { name, status: 'fail', detail: `GET /users/@me answered ${response.status}`, fix: 'check DISCORD_API_URL; try again if Discord is having trouble' };
  const me = (await response.json()) as { id: string; username: string };
  const applicationId = readSetting(env, 'DISCORD_APPLICATION_ID');
  if (applicationId && applicationId !== me.id) {
    return { name, status: 'fail', detail: `the token belongs to bot ${me.id}, DISCORD_APPLICATION_ID is ${applicationId}`, fix: 'use the token and application id of the same application' };
  }
  return { name, status: 'ok', detail: `GET /users/@me: ${me.username} (id ${me.id})` };
}

/** host:port/database, never the password. */
export function describeUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.host}${url.pathname.length > 1 ? url.pathname : ''}`;
  } catch {
    return 'the configured URL';
  }
}
