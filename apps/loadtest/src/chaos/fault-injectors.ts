import { setTimeout as sleep } from 'node:timers/promises';
import type { ManagedProcess } from '@switchboard/harness';
import { readJson } from '../http-json.ts';
import { killWorkerDuringCompression, killWorkerDuringDelivery, pidOf } from './aimed-kills.ts';
import type { ChaosTarget } from './chaos-target.ts';
import type { ScheduledFault } from './fault-schedule.ts';

export interface InjectedFault {
  fault: ScheduledFault;
  /** Epoch ms the fault began (a process killed, a service stopped, a fault armed). */
  startedAt: number;
  /** Epoch ms it was undone: the process answers its health check again, the service accepts connections, the fault is cleared. */
  endedAt: number;
  detail: string;
  /** Set when undoing or injecting it failed; the run goes on and the check reports it. */
  error?: string;
}

/** Injects one fault, holds it for its duration, undoes it; never throws (an error is part of the outcome). */
export async function injectFault(target: ChaosTarget, fault: ScheduledFault): Promise<InjectedFault> {
  const startedAt = Date.now();
  try {
    const detail = await injectors[fault.kind](target, fault);
    return { fault, startedAt, endedAt: Date.now(), detail };
  } catch (error) {
    return { fault, startedAt, endedAt: Date.now(), detail: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
}

type Injector = (target: ChaosTarget, fault: ScheduledFault) => Promise<string>;

const injectors: Record<ScheduledFault['kind'], Injector> = {
  'worker-kill': killWorker,
  'worker-kill-delivery': killWorkerDuringDelivery,
  'worker-kill-compression': killWorkerDuringCompression,
  'gateway-kill': killGateway,
  'all-sigterm': restartEverything,
  'redis-restart': async ({ redis }, fault) => {
    await redis.stop();
    await sleep(fault.durationMs);
    await redis.start();
    return `redis down ${fault.durationMs} ms, back empty (no persistence: queued jobs and leases gone)`;
  },
  'postgres-restart': async ({ postgres: pg }, fault) => {
    await pg.stop();
    await sleep(fault.durationMs);
    await pg.start();
    return `postgres fast shutdown, down ${fault.durationMs} ms`;
  },
  'platform-429': (target, fault) => holdPlatformFault(target, fault, '429'),
  'platform-5xx': (target, fault) => holdPlatformFault(target, fault, '5xx'),
  'discord-heartbeat-acks': async ({ system }, fault) => {
    await readJson(`${system.simUrl}/control/discord/gateway`, { method: 'POST', body: { action: 'stop-acks' } });
    await sleep(fault.durationMs);
    await readJson(`${system.simUrl}/control/discord/gateway`, { method: 'POST', body: { action: 'resume-acks' } });
    return `discord gateway sent no heartbeat ACK for ${fault.durationMs} ms`;
  },
  'model-slow': (target, fault) => holdModelFault(target, fault, { delayMs: 2_500 }),
  'model-failing': (target, fault) => holdModelFault(target, fault, { rules: [{ error: { status: 503, message: 'chaos: model down' } }] }),
};

/** SIGKILL of the worker with the most running turns (the scheduled one when none runs), a pause, a fresh process. */
async function killWorker({ system, sql }: ChaosTarget, fault: ScheduledFault): Promise<string> {
  let victim = system.workers.find((w) => w.name === fault.target) ?? (system.workers[0] as ManagedProcess);
  let running = 0;
  try {
    const rows = await sql<{ worker_id: string; n: number }[]>`
      select worker_id, count(*)::int as n from turns where status = 'running' and worker_id is not null group by worker_id order by n desc`;
    for (const row of rows) {
      const busiest = system.workers.find((w) => w.child.pid === pidOf(row.worker_id));
      if (busiest) {
        victim = busiest;
        running = row.n;
        break;
      }
    }
  } catch {
    // Only the aim suffers: the scheduled worker is killed instead.
  }
  await victim.stop('SIGKILL');
  await sleep(fault.durationMs);
  await system.startAgain(victim);
  return `${victim.name} SIGKILL with ${running} running turn(s), restarted after ${fault.durationMs} ms`;
}

async function killGateway({ system }: ChaosTarget, fault: ScheduledFault): Promise<string> {
  const victim = system.gateways.find((g) => g.name === fault.target) ?? (system.gateways[0] as ManagedProcess);
  await victim.stop('SIGKILL');
  await sleep(fault.durationMs);
  await system.startAgain(victim);
  return `${victim.name} SIGKILL, restarted after ${fault.durationMs} ms`;
}

/** SIGTERM to every gateway and worker at once (a deploy), all started again; the simulators are the platforms and stay. */
async function restartEverything({ system }: ChaosTarget, fault: ScheduledFault): Promise<string> {
  const all = [...system.gateways, ...system.workers];
  await Promise.all(all.map((p) => p.stop('SIGTERM')));
  await sleep(fault.durationMs);
  await Promise.all(all.map((p) => system.startAgain(p)));
  return `${all.length} processes SIGTERM, restarted after ${fault.durationMs} ms`;
}

/** Every call of the platform's API answers 429 (retry after 1 s) or 503 until the fault is cleared. */
async function holdPlatformFault({ system }: ChaosTarget, fault: ScheduledFault, kind: '429' | '5xx'): Promise<string> {
  const status = kind === '429' ? '429' : '503';
  const base = `${system.simUrl}/control/${fault.target}/faults`;
  const body =
    fault.target === 'discord'
      ? { route: 'messages', kind: status, times: 1_000_000, retryAfter: 1 }
      : { method: '*', kind: status, times: 1_000_000, retryAfter: 1 };
  await readJson(base, { method: 'POST', body });
  try {
    await sleep(fault.durationMs);
  } finally {
    await readJson(base, { method: 'DELETE' });
  }
  return `${fault.target} API answered ${status} for ${fault.durationMs} ms`;
}

interface ScriptChange {
  delayMs?: number;
  rules?: unknown[];
}

/** The load test's scripted model, changed for a while and put back as it was. */
async function holdModelFault({ system }: ChaosTarget, fault: ScheduledFault, change: ScriptChange): Promise<string> {
  const url = `${system.simUrl}/control/model/script`;
  const { remainingTimes: _remaining, ...script } = await readJson<{ remainingTimes?: unknown; rules?: unknown[]; delayMs?: number }>(url);
  await readJson(url, { method: 'POST', body: { ...script, ...change, rules: [...(change.rules ?? []), ...(script.rules ?? [])] } });
  try {
    await sleep(fault.durationMs);
  } finally {
    await readJson(url, { method: 'POST', body: script });
  }
  return change.rules ? `model answered 503 for ${fault.durationMs} ms` : `model took ${change.delayMs} ms per request for ${fault.durationMs} ms`;
}
