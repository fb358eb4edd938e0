import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';

// Field builders shared by every entry point's schema, so one env name means
// the same thing (and fails with the same message) in every process.

export const port = (fallback: number) =>
  z.coerce
    .number({ invalid_type_error: 'must be a port number' })
    .int('must be an integer')
    .min(0, 'must be between 0 and 65535')
    .max(65535, 'must be between 0 and 65535')
    .default(fallback);

export const positiveInt = (fallback: number) =>
  z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be an integer').min(1, 'must be at least 1').default(fallback);

/** An integer within [min, max]: for limits where 0 or a huge value would switch the protection off by accident. */
export const intInRange = (fallback: number, min: number, max: number) =>
  z.coerce
    .number({ invalid_type_error: 'must be a number' })
    .int('must be an integer')
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`)
    .default(fallback);

export const nonNegativeInt = (fallback: number) =>
  z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be an integer').min(0, 'must be 0 or more').default(fallback);

export function url(): z.ZodOptional<z.ZodString>;
export function url(fallback: string): z.ZodDefault<z.ZodString>;
export function url(fallback?: string) {
  const base = z.string().trim().url('must be a URL');
  return fallback === undefined ? base.optional() : base.default(fallback);
}

export const postgresUrl = z
  .string()
  .trim()
  .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
  .default('postgres://switchboard@127.0.0.1:54329/switchboard');

export const redisUrl = z
  .string()
  .trim()
  .regex(/^rediss?:\/\//, 'must be a redis:// URL')
  .default('redis://127.0.0.1:63799');

/** Key prefix for every Redis key (BullMQ and ours), so tests and tenants can share one Redis. */
export const redisPrefix = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 characters of A-Z a-z 0-9 _ . -')
  .default('sb');

export const optionalSecret = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .optional()
  .or(z.literal('').transform(() => undefined));

export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info');

export const busyInputMode = z.enum(['interrupt', 'queue', 'collect', 'steer']).default('interrupt');

export const ratio = (fallback: number) =>
  z.coerce
    .number({ invalid_type_error: 'must be a number' })
    .gt(0, 'must be greater than 0')
    .max(1, 'must be at most 1')
    .default(fallback);

export const telegramSecret = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,256}$/, 'must be 1-256 characters of A-Z a-z 0-9 _ - (Telegram secret_token rules)')
  .optional();

export const telegramToken = z
  .string()
  .trim()
  .regex(/^\d+:[A-Za-z0-9_-]+$/, 'must look like <bot id>:<secret> as BotFather gives it')
  .optional()
  .or(z.literal('').transform(() => undefined));

/** Names proxy-addr (Fastify's trustProxy) knows for whole address ranges. */
const trustProxyRangeNames = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY (docs/admin.md, "Behind a TLS proxy"): which peers may tell
 * the gateway the client's address and scheme in X-Forwarded-For/-Proto/-Host.
 * Unset, empty, `false` or `0`: nobody (the connecting address is the
 * client). A comma-separated list of IPs, CIDRs or `loopback`, `linklocal`,
 * `uniquelocal`: those proxies. An integer n: the nearest n hops, whoever
 * they are. `true`: every hop, so the left-most X-Forwarded-For entry counts.
 * The last two let any client that reaches the gateway directly claim an
 * address; use them only where the proxy is the only way in.
 */
export const trustProxy = z
  .string()
  .trim()
  .default('false')
  .transform((value, ctx): boolean | number | string[] => {
    if (value === '' || value === 'false' || value === '0') return false;
    if (value === 'true') return true;
    if (/^\d+$/.test(value)) {
      const hops = Number(value);
      if (hops <= 32) return hops;
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be a hop count of at most 32' });
      return z.NEVER;
    }
    const entries = value.split(',').map((entry) => entry.trim());
    const bad = entries.find((entry) => !trustProxyRangeNames.has(entry) && !isAddressOrCidr(entry));
    if (bad === undefined) return entries;
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: `must be false, true, a hop count, or comma-separated IPs, CIDRs, loopback, linklocal or uniquelocal (not "${bad}")`,
    });
    return z.NEVER;
  });

function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

/** ADMIN_COOKIE_SECURE: `auto` marks the admin session cookie `Secure` when the client's scheme is https (through TRUST_PROXY behind a proxy). */
export const adminCookieSecure = z.enum(['auto', 'always', 'never']).default('auto');

/** `on` or `off`, read as a boolean (a switch an operator flips). */
export const onOff = (fallback: 'on' | 'off') =>
  z
    .enum(['on', 'off'], { errorMap: () => ({ message: 'must be on or off' }) })
    .default(fallback)
    .transform((value) => value === 'on');

/** The runtime that runs a conversation's turns unless the conversation names its own (docs/codex.md). */
export const agentRuntime = z.enum(['openai', 'codex'], { errorMap: () => ({ message: 'must be openai or codex' }) }).default('openai');

/**
 * A directory, resolved to an absolute path against the process's working
 * directory at start, so a relative setting means one place for the whole
 * life of the process.
 */
export const directory = (fallback: string) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .default(fallback)
    .transform((value) => resolve(value));

/** Comma-separated paths (directories or files), each resolved to an absolute path against the working directory at start (as `directory`). */
export const pathList = z
  .string()
  .default('')
  .transform((value) => value.split(',').map((path) => path.trim()).filter(Boolean).map((path) => resolve(path)));

/** Comma-separated `host:port` entries (an IPv6 address in brackets), each host lower-cased. */
export const hostPortList = z
  .string()
  .default('')
  .transform((value) => value.split(',').map((entry) => entry.trim().toLowerCase()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):([1-9][0-9]{0,4})$/, 'must be comma-separated host:port entries (e.g. api.example.com:443)')));

/** Comma-separated user keys as turns and approvals name users: `platform:account:user` (e.g. `telegram:123456:42`). */
export const userKeyList = z
  .string()
  .default('')
  .transform((value) => value.split(',').map((key) => key.trim()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^(telegram|slack|discord):[^:\s,]+:[^:\s,]+$/, 'must be comma-separated platform:account:user keys (telegram|slack|discord)')));
