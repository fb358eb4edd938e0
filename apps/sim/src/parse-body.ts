import type { z } from 'zod';
import { SimError, describeZodError } from './errors.ts';

/** Validates a control request body, turning every schema problem into one clear 400. */
export function parseBody<S extends z.ZodTypeAny>(schema: S, body: unknown): z.output<S> {
  if (body === undefined) throw new SimError('SIM_BAD_REQUEST', 'a JSON body is required');
  const result = schema.safeParse(body);
  if (!result.success) throw new SimError('SIM_BAD_REQUEST', describeZodError(result.error));
  return result.data as z.output<S>;
}
