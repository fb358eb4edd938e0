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
