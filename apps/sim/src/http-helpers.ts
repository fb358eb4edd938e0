import type { FastifyReply } from 'fastify';
import { SimError } from './errors.ts';

/**
 * A signal that aborts when the client goes away before the response was
 * finished, or when the sim shuts down. `res` 'close' fires on both a normal
 * end and a dropped connection; `writableFinished` tells them apart.
 */
export function watchClient(reply: FastifyReply, shutdown: AbortSignal): { signal: AbortSignal; clientGone: () => boolean } {
  const controller = new AbortController();
  let gone = false;
  const res = reply.raw;
  const onClose = () => {
    if (res.writableFinished) return;
    gone = true;
    controller.abort(new Error('client closed the connection'));
  };
  if (res.destroyed) onClose();
  else res.once('close', onClose);
  const onShutdown = () => controller.abort(new Error('simulator shutting down'));
  if (shutdown.aborted) onShutdown();
  else shutdown.addEventListener('abort', onShutdown, { once: true });
  res.once('close', () => shutdown.removeEventListener('abort', onShutdown));
  return { signal: controller.signal, clientGone: () => gone };
}

/** Reads an integer query parameter, with a default and bounds, or throws a 400 naming it. */
export function readIntQuery(
  query: Record<string, unknown>,
  name: string,
  options: { fallback?: number; min?: number; max?: number } = {},
): number | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return options.fallback;
  const value = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(value)) throw new SimError('SIM_BAD_QUERY', `${name} must be an integer`);
  if (options.min !== undefined && value < options.min) throw new SimError('SIM_BAD_QUERY', `${name} must be at least ${options.min}`);
  if (options.max !== undefined && value > options.max) throw new SimError('SIM_BAD_QUERY', `${name} must be at most ${options.max}`);
  return value;
}

/** Telegram chat ids are integers or "@channelusername"; query strings carry both as text. */
export function normaliseChatId(raw: unknown): number | string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw === 'number') return raw;
  const text = String(raw).trim();
  return /^-?\d+$/.test(text) ? Number(text) : text;
}

/** The short word a control error carries in `error`, derived from its status. */
export function errorWord(statusCode: number): string {
  if (statusCode === 404) return 'not_found';
  if (statusCode === 408) return 'timeout';
  if (statusCode === 409) return 'conflict';
  if (statusCode === 413) return 'too_large';
  if (statusCode === 415) return 'unsupported_media_type';
  if (statusCode < 500) return 'bad_request';
  return 'internal';
}
