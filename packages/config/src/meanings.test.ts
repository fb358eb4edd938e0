import { describe, expect, it } from 'vitest';
import { readSchemaShape } from './meanings.ts';
import { gatewayEnvSchema, migrateEnvSchema, pairEnvSchema, simEnvSchema, workerEnvSchema } from './schemas.ts';

// .env.example and the doctor print each variable's meaning from its schema:
// a variable added without one would appear there unexplained.
describe('every variable says what it means', () => {
  it.each([
    ['gateway', gatewayEnvSchema],
    ['worker', workerEnvSchema],
    ['sim', simEnvSchema],
    ['migrate', migrateEnvSchema],
    ['pair', pairEnvSchema],
  ])('%s', (_name, schema) => {
    const missing = Object.entries(readSchemaShape(schema)).filter(([, field]) => !field.description?.trim());
    expect(missing.map(([name]) => name)).toEqual([]);
  });
});
