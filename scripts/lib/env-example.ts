import type { z } from 'zod';
import { gatewayEnvSchema, migrateEnvSchema, pairEnvSchema, readSchemaShape, simEnvSchema, workerEnvSchema } from '@switchboard/config';

/** Read by docker compose itself (docker-compose.yml), not by a Switchboard process. */
const composeVariables: { name: string; value: string; meaning: string; set?: boolean }[] = [
  { name: 'COMPOSE_PROFILES', value: 'live', set: true, meaning: 'docker compose: `live` runs gateway and worker; `docker compose --profile sim up` runs the simulated demo instead' },
  { name: 'POSTGRES_PASSWORD', value: 'switchboard', meaning: 'docker compose: password of the postgres service (DATABASE_URL inside compose is built from it)' },
  { name: 'SB_PG_PORT', value: '54329', meaning: 'docker compose: host loopback port published for Postgres' },
  { name: 'SB_REDIS_PORT', value: '63799', meaning: 'docker compose: host loopback port published for Redis' },
  { name: 'GATEWAY_PORT', value: '3000', meaning: "docker compose: host port published for the gateway (put a TLS proxy in front of it)" },
  { name: 'WORKER_METRICS_PORT', value: '9464', meaning: "docker compose: host loopback port published for the worker's /healthz and /metrics" },
  { name: 'SIM_PORT', value: '4010', meaning: "docker compose, profile sim: host loopback port of the simulator's control API" },
];

const processes: [string, z.ZodTypeAny][] = [
  ['gateway', gatewayEnvSchema],
  ['worker', workerEnvSchema],
  ['sim', simEnvSchema],
  ['migrate', migrateEnvSchema],
  ['pair', pairEnvSchema],
];

interface Variable {
  name: string;
  usedBy: string[];
  meaning: string;
  fallback: string | undefined;
}

/** The default a field falls back to when unset, as the text a user would write; undefined when it has none. */
function readDefault(field: z.ZodTypeAny): string | undefined {
  const def = (field as unknown as { _def: { typeName: string; defaultValue?: () => unknown; schema?: z.ZodTypeAny; in?: z.ZodTypeAny; left?: z.ZodTypeAny } })._def;
  if (def.typeName === 'ZodDefault' && def.defaultValue) {
    const value = def.defaultValue();
    return Array.isArray(value) ? value.join(',') : String(value);
  }
  const inner = def.schema ?? def.in ?? def.left;
  return inner ? readDefault(inner) : undefined;
}

export function collectVariables(): Variable[] {
  const byName = new Map<string, Variable>();
  for (const [process, schema] of processes) {
    for (const [name, field] of Object.entries(readSchemaShape(schema))) {
      const known = byName.get(name);
      if (known) {
        known.usedBy.push(process);
        continue;
      }
      byName.set(name, { name, usedBy: [process], meaning: field.description ?? '', fallback: readDefault(field) });
    }
  }
  return [...byName.values()];
}

/** Variables that must be set: no default and the process refuses to start without them. */
const required = new Set(['MODEL_BASE_URL']);

/**
 * `.env.example`: every variable any process reads, with its default and a
 * one-line meaning taken from the zod schemas (`.describe()`), then the ones
 * docker compose reads itself. Written by `npm run env:example`; a test
 * checks the committed file equals this.
 */
export function renderEnvExample(): string {
  const lines = [
    '# Every variable Switchboard reads, with its default (generated from the zod schemas in',
    '# packages/config by `npm run env:example`; do not edit by hand). Copy to .env and set what',
    '# you need: a commented line keeps the default. docker compose reads .env too.',
    '',
  ];
  for (const v of collectVariables()) {
    lines.push(`# ${v.meaning} (${v.usedBy.join(', ')}${v.fallback === undefined ? '' : `; default: ${v.fallback === '' ? 'empty' : v.fallback}`})`);
    lines.push(required.has(v.name) ? `${v.name}=` : `#${v.name}=${v.fallback ?? ''}`, '');
  }
  lines.push('# --- docker compose ---', '');
  for (const c of composeVariables) lines.push(`# ${c.meaning}`, `${c.set ? '' : '#'}${c.name}=${c.value}`, '');
  return `${lines.join('\n').trimEnd()}\n`;
}
