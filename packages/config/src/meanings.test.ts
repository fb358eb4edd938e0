import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { gatewayEnvSchema, migrateEnvSchema, simEnvSchema, workerEnvSchema } from './schemas.ts';

function shapeOf(schema: z.ZodTypeAny): Record<string, z.ZodTypeAny> {
  const def = (schema as unknown as { _def: { schema?: z.ZodTypeAny } })._def;
  return def.schema ? shapeOf(def.schema) : (schema as z.AnyZodObject).shape;
}

// .env.example and the doctor print each variable's meaning from its schema:
// a variable added without one would appear there unexplained.
describe('every variable says what it means', () => {
  it.each([
    ['gateway', gatewayEnvSchema],
    ['worker', workerEnvSchema],
    ['sim', simEnvSchema],
    ['migrate', migrateEnvSchema],
  ])('%s', (_name, schema) => {
    const missing = Object.entries(shapeOf(schema)).filter(([, field]) => !field.description?.trim());
    expect(missing.map(([name]) => name)).toEqual([]);
  });
});
