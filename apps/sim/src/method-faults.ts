import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseBody } from './parse-body.ts';

/**
 * A fault armed on one API method (or '*'): answer the next calls with 429, a
 * 5xx, after a delay, or (Telegram only) 400 "can't parse entities".
 */
export interface MethodFault {
  /** Lower-case method name, or '*'. */
  method: string;
  kind: '429' | '5xx' | 'delay' | 'refuse-markup';
  remaining: number;
  retryAfter: number;
  status: number;
  delayMs: number;
}

export interface FaultRouteOptions {
  path: string;
  /** The smallest retry delay the platform itself would ever ask for. */
  minRetryAfter: number;
  /**
   * The platform answers markup it cannot parse with an error of its own
   * (Telegram's 400 "can't parse entities"), so `refuse-markup` may be armed.
   */
  refusesMarkup?: boolean;
}

/**
 * `GET|POST|DELETE <path>` for the method-keyed fault switches that the
 * Telegram Bot API and the Slack Web API share.
 */
export function registerMethodFaultRoutes(app: FastifyInstance, store: { faults: MethodFault[] }, options: FaultRouteOptions): void {
  const { path, minRetryAfter, refusesMarkup = false } = options;
  const kinds = ['429', '500', '502', '503', '504', 'delay'] as const;
  const faultSchema = z
    .object({
      /** An API method name (any case), or '*' for every method. */
      method: z.string().min(1),
      kind: refusesMarkup ? z.enum([...kinds, 'refuse-markup'] as const) : z.enum(kinds),
      times: z.number().int().positive().default(1),
      retryAfter: z.number().int().min(minRetryAfter).default(1),
      delayMs: z.number().int().nonnegative().max(300_000).default(1000),
    })
    .strict();

  app.get(path, async () => store.faults);

  app.post(path, async (request) => {
    const fault = parseBody(faultSchema, request.body);
    const kind = fault.kind === 'delay' || fault.kind === '429' || fault.kind === 'refuse-markup' ? fault.kind : '5xx';
    const status = { '5xx': Number(fault.kind), '429': 429, 'refuse-markup': 400, delay: 200 }[kind];
    store.faults.push({
      method: fault.method === '*' ? '*' : fault.method.toLowerCase(),
      kind,
      remaining: fault.times,
      retryAfter: fault.retryAfter,
      status,
      delayMs: fault.delayMs,
    });
    return { ok: true, faults: store.faults };
  });

  app.delete(path, async () => {
    store.faults = [];
    return { ok: true };
  });
}
