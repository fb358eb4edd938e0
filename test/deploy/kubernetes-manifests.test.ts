import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayEnvSchema, migrateEnvSchema, parseConfig, readSchemaShape, workerEnvSchema } from '@switchboard/config';
import { isWorkerSecretName } from '@switchboard/core';
import { startGateway, type RunningGateway } from '@switchboard/gateway';
import { repoRoot } from '@switchboard/harness';
import { createRedisPrefix, createTestDatabase, redisUrl, type TestDatabase } from '@switchboard/harness/test-env';
import { createLogger } from '@switchboard/logger';
import { afterDrainMs, hardStopMsFor, startWorker, type RunningWorker } from '@switchboard/worker';

// No cluster runs on our machines, so deploy/kubernetes/ is checked against
// the code instead: every variable a manifest sets is one its process's config
// schema reads, with a value it accepts, and every secret comes from the
// Secret; the probes name routes the real gateway and worker answer (both are
// started here from the manifests' settings, on real Postgres and Redis); the
// ports agree; the grace periods outlast the processes' own stop; the HPA's
// metric is one the gateway exports.

// Parsed YAML: the assertions below are what checks its shape.
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Container {
  name: string;
  image: string;
  command: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: Obj[];
  envFrom?: Obj[];
  livenessProbe?: Obj;
  readinessProbe?: Obj;
  startupProbe?: Obj;
  lifecycle?: Obj;
  resources?: Obj;
  securityContext?: Obj;
  volumeMounts?: { name: string; mountPath: string }[];
}

const dir = join(repoRoot, 'deploy/kubernetes');
const read = (path: string) => readFileSync(join(dir, path), 'utf8');
// YAML 1.1, as Kubernetes reads it: a bare on, off, yes or no is a boolean there, not a string.
const docsOf = (path: string): Obj[] => parseAllDocuments(read(path), { version: '1.1' }).map((d) => d.toJS() as Obj).filter(Boolean);
/** What `kubectl apply -k <dir>` applies: the files its kustomization lists. */
const kustomize = (sub: string) => {
  const k = parse(read(join(sub, 'kustomization.yaml'))) as Obj;
  return { images: k.images as Obj[], objects: (k.resources as string[]).flatMap((r) => docsOf(join(sub, r))) };
};
const main = kustomize('.');
const migrate = kustomize('migrate');
const find = (objects: Obj[], kind: string, name: string): Obj => {
  const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const podOf = (workload: Obj): Obj => workload.spec.template.spec;
const containerOf = (workload: Obj): Container => podOf(workload).containers[0];
const gateway = find(main.objects, 'Deployment', 'switchboard-gateway');
const worker = find(main.objects, 'Deployment', 'switchboard-worker');
const job = find(migrate.objects, 'Job', 'switchboard-migrate');
const schemas: Record<string, z.ZodTypeAny> = { gateway: gatewayEnvSchema, worker: workerEnvSchema, migrate: migrateEnvSchema };
const workloads = { gateway, worker, migrate: job };

/** A secret by the config's own list (what no Codex child may get) or by its name's kind. */
const isSecretName = (name: string) => isWorkerSecretName(name) || /(_TOKEN|_SECRET|_PASSWORD|_API_KEY)$/.test(name);

interface EnvSource { name: string; from: 'configMap' | 'secret' | 'value'; value?: string; optional?: boolean; key?: string }

/** Every variable the container gets, and from where (ConfigMaps resolved against the applied objects). */
function envOf(container: Container): EnvSource[] {
  const sources: EnvSource[] = [];
  for (const from of container.envFrom ?? []) {
    if (from.secretRef) throw new Error(`${container.name}: envFrom secretRef hides which secrets a process gets; name each with secretKeyRef`);
    const map = find(main.objects, 'ConfigMap', from.configMapRef.name);
    for (const [name, value] of Object.entries(map.data as Record<string, string>)) sources.push({ name, from: 'configMap', value });
  }
  for (const e of container.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) sources.push({ name: e.name, from: 'secret', optional: ref.optional === true, key: ref.key });
    else if (e.valueFrom) throw new Error(`${container.name}: ${e.name} from an unexpected source`);
    else sources.push({ name: e.name, from: 'value', value: String(e.value) });
  }
  return sources;
}

/** The settings the manifests give a process, as its config reads them; the Secret's values are the test's own. */
function configEnvOf(workload: Obj, secrets: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const s of envOf(containerOf(workload))) {
    if (s.from !== 'secret') env[s.name] = s.value as string;
    else if (secrets[s.name] !== undefined) env[s.name] = secrets[s.name] as string;
  }
  return env;
}

/** The hard stop a process's main.ts gives close-with-grace, in ms: past it the process exits whatever is left. */
function closeWithGraceDelayOf(app: 'gateway' | 'worker'): number {
  const match = /closeWithGrace\(\{\s*delay:\s*([\d_]+)/.exec(readFileSync(join(repoRoot, `apps/${app}/src/main.ts`), 'utf8'));
  if (!match) throw new Error(`apps/${app}/src/main.ts: no close-with-grace delay found`);
  return Number((match[1] as string).replaceAll('_', ''));
}

/** The container port a probe or Service names (a number, or a port's name). */
function resolvePort(container: Container, port: number | string): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

describe('deploy/kubernetes manifests', () => {
  it('applies gateways, workers, their settings, budgets and autoscaler; the migration Job on its own; no Secret', () => {
    const kinds = main.objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(kinds).toEqual([
      'ConfigMap/switchboard-gateway',
      'ConfigMap/switchboard-worker',
      'Deployment/switchboard-gateway',
      'Deployment/switchboard-worker',
      'HorizontalPodAutoscaler/switchboard-worker',
      'PodDisruptionBudget/switchboard-gateway',
      'PodDisruptionBudget/switchboard-worker',
      'Service/switchboard-gateway',
    ]);
    expect(migrate.objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Job/switchboard-migrate']);
    expect(podOf(job).restartPolicy).toBe('Never');
  });

  it('runs every process from the image the Dockerfile builds, through the launcher, one tag for the release', () => {
    const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('COPY scripts/run-entry.mjs ./scripts/run-entry.mjs');
    expect(dockerfile).toMatch(/^USER node$/m);
    for (const [entry, workload] of Object.entries(workloads)) {
      expect(podOf(workload).containers, `${entry}: one container, the one checked here`).toHaveLength(1);
      expect(podOf(workload).initContainers, entry).toBeUndefined();
      const container = containerOf(workload);
      expect(container.command, entry).toEqual(['node', 'scripts/run-entry.mjs', entry]);
      expect(container.image, entry).toBe('switchboard');
    }
    expect(migrate.images).toEqual(main.images);
    expect(main.images.map((i) => i.name)).toEqual(['switchboard']);
  });

  it('passes each process only variables its config schema reads, and every secret only from the Secret', () => {
    for (const [entry, workload] of Object.entries(workloads)) {
      const known = Object.keys(readSchemaShape(schemas[entry] as z.ZodTypeAny));
      const sources = envOf(containerOf(workload));
      expect(sources.map((s) => s.name).filter((n) => !known.includes(n)), `${entry}: variables its process does not read`).toEqual([]);
      expect(sources.filter((s) => isSecretName(s.name) && s.from !== 'secret').map((s) => s.name), `${entry}: secrets not from the Secret`).toEqual([]);
      for (const s of sources.filter((s) => s.from === 'secret')) {
        expect(s.key, `${entry}: the Secret's key is the variable's name`).toBe(s.name);
        // Their schema defaults are loopback addresses: a missing key must stop the pod, not point it at 127.0.0.1.
        if (s.name === 'DATABASE_URL' || s.name === 'REDIS_URL') expect(s.optional, `${entry}: ${s.name} required`).toBe(false);
      }
      const names = sources.map((s) => s.name);
      expect(names.filter((n, i) => names.indexOf(n) !== i), `${entry}: set twice`).toEqual([]);
    }
    const secretObjects = [...main.objects, ...migrate.objects].filter((o) => o.kind === 'Secret');
    expect(secretObjects).toEqual([]);
    // A ConfigMap's values are strings (the API refuses a bare 3000 or on).
    for (const map of main.objects.filter((o) => o.kind === 'ConfigMap')) {
      for (const [name, value] of Object.entries(map.data as Record<string, unknown>)) expect(typeof value, `${map.metadata.name} ${name}`).toBe('string');
    }
  });

  it('gives each process values its configuration accepts', () => {
    const secrets = { DATABASE_URL: 'postgres://u@db:5432/switchboard', REDIS_URL: 'redis://redis:6379' };
    for (const [entry, workload] of Object.entries(workloads)) {
      const result = (schemas[entry] as z.ZodTypeAny).safeParse(configEnvOf(workload, secrets));
      expect(result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`), entry).toEqual([]);
    }
  });

  it("listens where the probes, the Service and the scrape look: the process's own port, on every interface", () => {
    const secrets = { DATABASE_URL: 'postgres://u@db:5432/switchboard', REDIS_URL: 'redis://redis:6379' };
    const portOf = { gateway: parseConfig(gatewayEnvSchema, configEnvOf(gateway, secrets)), worker: parseConfig(workerEnvSchema, configEnvOf(worker, secrets)) };
    const listening = { gateway: portOf.gateway.PORT, worker: portOf.worker.WORKER_PORT };
    for (const [entry, workload] of Object.entries({ gateway, worker })) {
      const container = containerOf(workload);
      const port = listening[entry as 'gateway' | 'worker'];
      expect(portOf[entry as 'gateway' | 'worker'].HOST, `${entry}: the kubelet probes the pod's address`).toBe('0.0.0.0');
      expect(container.ports?.map((p) => p.containerPort), entry).toEqual([port]);
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
        expect(resolvePort(container, container[probe]?.httpGet.port), `${entry} ${probe}`).toBe(port);
      }
      expect(Number(workload.spec.template.metadata.annotations['prometheus.io/port']), entry).toBe(port);
    }
    const service = find(main.objects, 'Service', 'switchboard-gateway');
    expect(resolvePort(containerOf(gateway), service.spec.ports[0].targetPort)).toBe(listening.gateway);
    expect(service.spec.selector).toEqual(gateway.spec.template.metadata.labels);
  });

  it('stops each process within its grace period: the worker drains inside its own hard stop, the gateway after the load balancer let go', () => {
    const workerConfig = parseConfig(workerEnvSchema, configEnvOf(worker, {}));
    // The worker's hard stop follows its drain (apps/worker/src/stop-deadline.ts): the drain plus the close after it.
    const workerStop = hardStopMsFor(workerConfig.DRAIN_TIMEOUT_MS);
    expect(workerConfig.DRAIN_TIMEOUT_MS + afterDrainMs, 'the drain ends before close-with-grace exits the worker').toBeLessThanOrEqual(workerStop);
    expect(podOf(worker).terminationGracePeriodSeconds * 1000).toBeGreaterThan(workerStop);
    expect(podOf(worker).terminationGracePeriodSeconds * 1000).toBeGreaterThan(workerConfig.DRAIN_TIMEOUT_MS);
    const preStop = containerOf(gateway).lifecycle?.preStop?.exec?.command as string[];
    expect(preStop?.[0]).toBe('sleep');
    expect(podOf(gateway).terminationGracePeriodSeconds * 1000).toBeGreaterThan(Number(preStop[1]) * 1000 + closeWithGraceDelayOf('gateway'));
  });

  it('keeps at most one gateway and one worker out at a time, with at least two of each', () => {
    for (const workload of [gateway, worker]) {
      const name = workload.metadata.name as string;
      const pdb = find(main.objects, 'PodDisruptionBudget', name);
      expect(pdb.spec.selector.matchLabels, name).toEqual(workload.spec.selector.matchLabels);
      expect(workload.spec.template.metadata.labels, name).toMatchObject(workload.spec.selector.matchLabels);
      expect(pdb.spec.maxUnavailable, name).toBe(1);
      expect(workload.spec.strategy.rollingUpdate.maxUnavailable, name).toBe(0);
    }
    expect(gateway.spec.replicas).toBeGreaterThanOrEqual(2);
    // The HPA owns the workers' count: a count in the Deployment would reset it on every apply.
    expect(worker.spec.replicas).toBeUndefined();
    expect(find(main.objects, 'HorizontalPodAutoscaler', 'switchboard-worker').spec.minReplicas).toBeGreaterThanOrEqual(2);
  });

  it('runs as non-root on a read-only root, writing only to its emptyDirs, with memory requests and limits', () => {
    const workerConfig = parseConfig(workerEnvSchema, configEnvOf(worker, {}));
    for (const [entry, workload] of Object.entries(workloads)) {
      const pod = podOf(workload);
      const container = containerOf(workload);
      expect(pod.securityContext.runAsNonRoot, entry).toBe(true);
      expect(pod.securityContext.runAsUser, entry).toBeGreaterThan(0);
      expect(container.securityContext, entry).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      expect(container.resources?.requests?.memory, entry).toBeDefined();
      expect(container.resources?.limits?.memory, entry).toBeDefined();
      expect(pod.automountServiceAccountToken, entry).toBe(false);
      for (const mount of container.volumeMounts ?? []) expect(pod.volumes.find((v: Obj) => v.name === mount.name)?.emptyDir, `${entry} ${mount.name}`).toBeDefined();
    }
    const mounts = (containerOf(worker).volumeMounts ?? []).map((m) => m.mountPath);
    for (const path of ['/tmp', workerConfig.CODEX_WORKSPACES, workerConfig.CODEX_HOMES]) {
      expect(mounts.some((m) => path === m || path.startsWith(`${m}/`)), `${path} is writable`).toBe(true);
    }
  });
});

describe('deploy/kubernetes against the running processes', () => {
  let database: TestDatabase;
  let runningGateway: RunningGateway;
  let runningWorker: RunningWorker;
  const hpa = find(main.objects, 'HorizontalPodAutoscaler', 'switchboard-worker');

  beforeAll(async () => {
    database = await createTestDatabase();
    // The manifests' settings with the test's Postgres and Redis; on loopback and a free port, as a test must.
    const secrets = { DATABASE_URL: database.url, REDIS_URL: redisUrl() };
    const local = { HOST: '127.0.0.1', REDIS_PREFIX: createRedisPrefix(), LOG_LEVEL: 'silent' };
    runningGateway = await startGateway(parseConfig(gatewayEnvSchema, { ...configEnvOf(gateway, secrets), ...local, PORT: '0' }), createLogger('k8s-test', 'silent'));
    runningWorker = await startWorker(parseConfig(workerEnvSchema, { ...configEnvOf(worker, secrets), ...local, WORKER_PORT: '0' }), createLogger('k8s-test', 'silent'));
  });
  afterAll(async () => {
    await runningWorker?.close();
    await runningGateway?.close();
    await database?.drop();
  });

  it('probes routes the gateway and the worker answer, liveness on the one that asks no database', async () => {
    const urls = { gateway: runningGateway.url, worker: runningWorker.url };
    for (const [entry, workload] of Object.entries({ gateway, worker })) {
      const container = containerOf(workload);
      expect(container.livenessProbe?.httpGet.path, `${entry}: a database outage must not restart it`).toBe('/healthz');
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
        const path = container[probe]?.httpGet.path as string;
        const response = await fetch(`${urls[entry as 'gateway' | 'worker']}${path}`);
        expect(response.status, `${entry} ${probe} GET ${path}`).toBe(200);
      }
    }
    expect(containerOf(gateway).readinessProbe?.httpGet.path, 'the gateway is ready when Postgres and Redis answer').toBe('/readyz');
  });

  it("scales workers on the workers' own running-turn gauge, through the adapter rule, below what a worker can run", async () => {
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'switchboard-worker' });
    const [metric] = hpa.spec.metrics as Obj[];
    expect(metric?.type).toBe('Pods');
    const { name } = metric?.pods.metric as { name: string };
    const exported = await (await fetch(`${runningWorker.url}/metrics`)).text();
    expect(exported).toMatch(new RegExp(`^${name} \\d+$`, 'm'));
    const adapter = parse(parse(read('prometheus-adapter.example.yaml')).data['config.yaml']) as { rules: Obj[] };
    const rule = adapter.rules.find((r) => r.name?.as === name);
    expect(rule?.seriesQuery).toMatch(new RegExp(`^${name}\\{`));
    const concurrency = parseConfig(workerEnvSchema, configEnvOf(worker, {})).WORKER_CONCURRENCY;
    expect(Number(metric?.pods.target.averageValue), 'a worker never runs more than WORKER_CONCURRENCY').toBeLessThan(concurrency);
  });

});
