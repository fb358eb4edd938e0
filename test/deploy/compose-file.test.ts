import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { gatewayEnvSchema, migrateEnvSchema, readSchemaShape, simEnvSchema, workerEnvSchema } from '@switchboard/config';
import { repoRoot } from '@switchboard/harness';

// No Docker engine runs on our machines, so docker-compose.yml and the
// Dockerfile are checked here instead: the file parses, every service runs a
// real entry point with variables its process knows and with values its
// config accepts, the worker has a fixed health/metrics port, the live worker
// refuses to start without MODEL_BASE_URL, and the sim profile is wired to
// the simulator end to end.

interface Service {
  command?: string[];
  profiles?: string[];
  environment?: Record<string, string | number | null>;
  depends_on?: Record<string, unknown> | string[];
  healthcheck?: { test: string[] };
  ports?: string[];
  build?: unknown;
  image?: string;
}

const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const schemas: Record<string, z.ZodTypeAny> = { gateway: gatewayEnvSchema, worker: workerEnvSchema, sim: simEnvSchema, migrate: migrateEnvSchema };
const entryOf = (service: Service) => service.command?.[2] ?? '';

/** The environment compose would pass with nothing set in .env: `${X:-d}` is d, `${X}` and bare keys are unset. */
function environmentWithDefaults(service: Service): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, raw] of Object.entries(service.environment ?? {})) {
    if (raw === null || raw === undefined) continue;
    const value = String(raw).replace(/\$\{[A-Z0-9_]+(?::-([^}]*))?\}/g, (_all, fallback: string | undefined) => fallback ?? '');
    if (value !== '') env[name] = value;
  }
  return env;
}

describe('docker-compose.yml', () => {
  const appServices = Object.entries(services).filter(([, s]) => s.command?.[1] === 'scripts/run-entry.mjs');

  it('runs every app service through the launcher with a real entry point', () => {
    expect(appServices.map(([name]) => name).sort()).toEqual(['gateway', 'gateway-sim', 'migrate', 'sim', 'worker', 'worker-sim']);
    for (const [name, service] of appServices) {
      expect(service.command?.[0], name).toBe('node');
      expect(Object.keys(schemas), name).toContain(entryOf(service));
      expect(service.build ?? service.image, name).toBeDefined();
    }
    expect(existsSync(join(repoRoot, 'scripts/run-entry.mjs'))).toBe(true);
  });

  it('passes each process only variables it knows', () => {
    for (const [name, service] of appServices) {
      const known = Object.keys(readSchemaShape(schemas[entryOf(service)] as z.ZodTypeAny));
      const unknown = Object.keys(service.environment ?? {}).filter((v) => !known.includes(v));
      expect(unknown, `${name} passes variables its process does not read`).toEqual([]);
    }
  });

  it('gives every process values its configuration accepts, except a live worker without MODEL_BASE_URL', () => {
    for (const [name, service] of appServices) {
      const result = (schemas[entryOf(service)] as z.ZodTypeAny).safeParse(environmentWithDefaults(service));
      if (name === 'worker') {
        expect(result.success).toBe(false);
        expect(result.success ? [] : result.error.issues.map((i) => i.path.join('.'))).toEqual(['MODEL_BASE_URL']);
      } else {
        expect(result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`), name).toEqual([]);
      }
    }
  });

  it('starts every dependency it names, and health-checks gateways and workers on their own ports', () => {
    for (const [name, service] of Object.entries(services)) {
      const deps = Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
      for (const dep of deps) expect(Object.keys(services), `${name} depends on ${dep}`).toContain(dep);
    }
    for (const name of ['worker', 'worker-sim']) {
      const worker = services[name] as Service;
      const port = Number(worker.environment?.WORKER_PORT);
      expect(port, name).toBeGreaterThan(0);
      expect(worker.healthcheck?.test.join(' '), name).toContain(`127.0.0.1:${port}/healthz`);
      expect(worker.ports?.some((p) => p.endsWith(`:${port}`)), name).toBe(true);
    }
    for (const name of ['gateway', 'gateway-sim']) expect((services[name] as Service).healthcheck?.test.join(' '), name).toContain('/healthz');
  });

  it('wires the sim profile to the simulator and keeps it apart from the live services', () => {
    const profileOf = (name: string) => (services[name] as Service).profiles ?? [];
    for (const name of ['gateway', 'worker']) expect(profileOf(name)).toEqual(['live']);
    for (const name of ['sim', 'gateway-sim', 'worker-sim']) expect(profileOf(name)).toEqual(['sim']);
    const env = (name: string) => environmentWithDefaults(services[name] as Service);
    expect(env('worker-sim').MODEL_BASE_URL).toBe('http://sim:4010/v1');
    for (const name of ['gateway-sim', 'worker-sim']) {
      expect(env(name).TELEGRAM_API_ROOT, name).toBe('http://sim:4010');
      expect(env(name).SLACK_API_URL, name).toBe('http://sim:4010/api/');
      expect(env(name).TELEGRAM_BOT_TOKEN, name).toBe(env('sim').TELEGRAM_BOT_TOKEN);
      expect(env(name).SLACK_BOT_TOKEN, name).toBe(env('sim').SLACK_BOT_TOKEN);
    }
    expect(env('gateway-sim').TELEGRAM_WEBHOOK_SECRET).toBe(env('sim').TELEGRAM_WEBHOOK_SECRET);
    expect(env('gateway-sim').SLACK_SIGNING_SECRET).toBe(env('sim').SLACK_SIGNING_SECRET);
    expect(env('sim').SIM_TELEGRAM_WEBHOOK_URL).toBe('http://gateway-sim:3000/webhooks/telegram');
    expect(env('sim').SIM_SLACK_EVENTS_URL).toBe('http://gateway-sim:3000/webhooks/slack/events');
  });

  it('lists every variable it reads from .env in .env.example, which turns the live profile on', () => {
    const text = readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8');
    const referenced = new Set([...text.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1] as string));
    for (const [, service] of appServices) for (const [name, value] of Object.entries(service.environment ?? {})) if (value === null) referenced.add(name);
    const example = readFileSync(join(repoRoot, '.env.example'), 'utf8');
    const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1] as string));
    expect([...referenced].filter((name) => !listed.has(name)).sort()).toEqual([]);
    expect(example).toMatch(/^COMPOSE_PROFILES=live$/m);
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');

  it('builds on Node 24 with the commands CI runs and ships dist/ with production dependencies only', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-/m);
    for (const command of ['RUN npm ci\n', 'RUN npm run build', 'RUN npm ci --omit=dev']) expect(dockerfile).toContain(command);
    expect(dockerfile).toContain('COPY --from=build /src/dist ./dist');
    expect(dockerfile).toContain('CMD ["node", "scripts/run-entry.mjs", "gateway"]');
  });
});

describe('.env.example', () => {
  it('is what `npm run env:example` writes from the schemas today', async () => {
    const { renderEnvExample } = await import('../../scripts/lib/env-example.ts');
    expect(readFileSync(join(repoRoot, '.env.example'), 'utf8')).toBe(renderEnvExample());
  });
});
