/**
 * `npm run pair -- <command>`: pairing (DM_POLICY=pairing) from a shell,
 * through the admin API of a running gateway (docs/admin.md, "Pairing").
 *
 *   npm run pair -- list                       pending codes and paired users
 *   npm run pair -- approve <code>             approve a code; the user is told
 *   npm run pair -- deny <code>                deny a code; no new one for that user for a day
 *   npm run pair -- revoke <platform> <userId> un-pair a user
 *
 * The gateway is GATEWAY_URL, else http://HOST:PORT as the gateway itself
 * reads them (defaults 127.0.0.1:3000). The credential is ADMIN_TOKEN; of a
 * `name:token,…` list the first token is used, so its name is the actor in
 * the audit log. Exit 0 on success, 1 when the gateway refuses or cannot be
 * reached (with the reason and its error code), 2 on a usage mistake.
 */

import { ConfigError, pairEnvSchema, parseConfig, type PairConfig } from '@switchboard/config';

const usage = `usage: npm run pair -- list
       npm run pair -- approve <code>
       npm run pair -- deny <code>
       npm run pair -- revoke <telegram|slack|discord> <userId>`;

class PairError extends Error {}

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

function gatewayUrl(config: PairConfig): string {
  if (config.GATEWAY_URL) return config.GATEWAY_URL.replace(/\/+$/, '');
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}`;
}

/** The first token of ADMIN_TOKEN (`token` or `name:token,…`, as the gateway reads it). */
function adminToken(config: PairConfig): string {
  const first = (config.ADMIN_TOKEN ?? '').split(',')[0]?.trim() ?? '';
  const token = first.includes(':') ? first.slice(first.indexOf(':') + 1) : first;
  if (!token) throw new PairError('ADMIN_TOKEN is not set: it must hold the gateway admin token');
  return token;
}

function readConfig(env: NodeJS.ProcessEnv): PairConfig {
  try {
    return parseConfig(pairEnvSchema, env);
  } catch (error) {
    throw new PairError(error instanceof ConfigError ? error.message : String(error));
  }
}

async function call(base: string, token: string, method: string, path: string): Promise<Reply> {
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new PairError(`cannot reach the gateway at ${base} (${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}); set GATEWAY_URL or HOST/PORT`);
  }
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = {};
  }
  if (response.status === 404 && body.error === undefined) throw new PairError(`the gateway at ${base} has no admin API (is ADMIN_TOKEN set for it?)`);
  if (response.status >= 400) throw new PairError(`${String(body.message ?? `HTTP ${response.status}`)} (${String(body.error ?? response.status)})`);
  return { status: response.status, body };
}

async function listAll(base: string, token: string): Promise<string> {
  const pending = (await call(base, token, 'GET', '/admin/pairings')).body.items as { code: string; platform: string; userId: string; expiresAt: string }[];
  const paired = (await call(base, token, 'GET', '/admin/paired-users')).body.items as { platform: string; userId: string; approvedBy: string; pairedAt: string }[];
  const lines = [`Pending codes: ${pending.length}`];
  for (const p of pending) lines.push(`  ${p.code}  ${p.platform} user ${p.userId}, expires ${p.expiresAt}`);
  lines.push(`Paired users: ${paired.length}`);
  for (const u of paired) lines.push(`  ${u.platform} user ${u.userId}, approved by ${u.approvedBy} at ${u.pairedAt}`);
  return lines.join('\n');
}

async function run(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const [command, ...rest] = args;
  const config = readConfig(env);
  const base = gatewayUrl(config);
  if (command === 'list' && rest.length === 0) return listAll(base, adminToken(config));
  if (command === 'approve' && rest.length === 1 && rest[0]) {
    const { body } = await call(base, adminToken(config), 'POST', `/admin/pairings/${encodeURIComponent(rest[0])}/approve`);
    return `Approved: ${String(body.platform)} user ${String(body.userId)} is paired and is being told so.`;
  }
  if (command === 'deny' && rest.length === 1 && rest[0]) {
    const { body } = await call(base, adminToken(config), 'POST', `/admin/pairings/${encodeURIComponent(rest[0])}/deny`);
    return `Denied: ${String(body.platform)} user ${String(body.userId)} gets no pairing code for a day.`;
  }
  if (command === 'revoke' && rest.length === 2 && rest[0] && rest[1]) {
    await call(base, adminToken(config), 'DELETE', `/admin/paired-users/${encodeURIComponent(rest[0])}/${encodeURIComponent(rest[1])}`);
    return `Revoked: ${rest[0]} user ${rest[1]} is no longer paired.`;
  }
  throw Object.assign(new PairError(usage), { exitCode: 2 });
}

run(process.argv.slice(2), process.env).then(
  (output) => {
    console.log(output);
  },
  (error: unknown) => {
    if (!(error instanceof PairError)) {
      console.error(`pair failed: ${(error as Error).message}`);
      process.exitCode = 1;
      return;
    }
    const exitCode = (error as PairError & { exitCode?: number }).exitCode ?? 1;
    console.error(exitCode === 2 ? error.message : `pair failed: ${error.message}`);
    process.exitCode = exitCode;
  },
);
