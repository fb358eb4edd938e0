import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ; /proc/<pid>/stat counts CPU time in these ticks. */
const ticksPerSecond = 100;

/** Resident set size in MiB from /proc/<pid>/status (VmRSS), or undefined once the process is gone. */
export function readRssMiB(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** User + system CPU time of one process, in ms. */
export function readCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses; fields are counted after its closing ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return 0;
  }
}

/** Processes whose command line contains `needle` (Postgres backends show their database name there). */
export function findPids(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(needle)) pids.push(Number(entry));
    } catch {
      // gone between readdir and read
    }
  }
  return pids;
}

/** Busy and total jiffies of the whole machine, from the first line of /proc/stat. */
function readMachineTicks(): { busy: number; total: number } {
  const [, ...numbers] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/);
  const values = numbers.map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

export interface CpuUsage {
  /** CPU ms per named group of processes over the interval. */
  byGroup: Record<string, number>;
  /** Share of all cores that was busy (anything on the machine, not only ours). */
  machineBusy: number;
  /** CPU ms the machine spent on processes outside the groups (other people's work, the kernel). */
  otherMs: number;
  wallMs: number;
}

/**
 * Starts a CPU-time measurement over groups of processes; `finish()` gives
 * each group's CPU ms. Groups are re-resolved at the end too, so Postgres
 * backends opened during the interval count (from their start).
 */
export function startCpuMeasurement(groups: Record<string, () => number[]>): { finish(): CpuUsage } {
  const before = new Map<number, number>();
  for (const resolve of Object.values(groups)) for (const pid of resolve()) before.set(pid, readCpuMs(pid));
  const machineBefore = readMachineTicks();
  const startedAt = performance.now();
  return {
    finish() {
      const byGroup: Record<string, number> = {};
      for (const [name, resolve] of Object.entries(groups)) {
        byGroup[name] = resolve().reduce((sum, pid) => sum + Math.max(0, readCpuMs(pid) - (before.get(pid) ?? 0)), 0);
      }
      const machineAfter = readMachineTicks();
      const total = machineAfter.total - machineBefore.total;
      const busyMs = ((machineAfter.busy - machineBefore.busy) * 1000) / ticksPerSecond;
      const oursMs = Object.values(byGroup).reduce((a, b) => a + b, 0);
      return {
        byGroup,
        machineBusy: total > 0 ? (machineAfter.busy - machineBefore.busy) / total : 0,
        otherMs: Math.max(0, busyMs - oursMs),
        wallMs: performance.now() - startedAt,
      };
    },
  };
}

export interface RssSeries {
  name: string;
  /** [seconds since start, MiB] */
  samples: [number, number][];
}

/** Samples the RSS of named processes every `intervalMs` until stopped. */
export function startRssSampler(processes: { name: string; pid: number }[], intervalMs: number): { stop(): RssSeries[] } {
  const startedAt = performance.now();
  const series = processes.map((p) => ({ name: p.name, pid: p.pid, samples: [] as [number, number][] }));
  const sample = () => {
    const t = (performance.now() - startedAt) / 1000;
    for (const s of series) {
      const rss = readRssMiB(s.pid);
      if (rss !== undefined) s.samples.push([t, rss]);
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return series.map(({ name, samples }) => ({ name, samples }));
    },
  };
}

/** Least-squares slope of the samples, in MiB per minute. */
export function trendMiBPerMinute(samples: [number, number][]): number {
  if (samples.length < 2) return 0;
  const n = samples.length;
  const meanT = samples.reduce((a, [t]) => a + t, 0) / n;
  const meanV = samples.reduce((a, [, v]) => a + v, 0) / n;
  let num = 0;
  let den = 0;
  for (const [t, v] of samples) {
    num += (t - meanT) * (v - meanV);
    den += (t - meanT) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60;
}

/**
 * Commands Redis has executed since it started (sum of INFO commandstats),
 * over a bare RESP connection so the bench needs no client library for it.
 */
export async function readRedisCommandCount(redisUrl: string): Promise<number> {
  const { hostname, port } = new URL(redisUrl);
  const { createConnection } = await import('node:net');
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    let text = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('redis INFO timed out')));
    socket.on('connect', () => socket.write('INFO commandstats\r\n'));
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      const header = /^\$(\d+)\r\n/.exec(text);
      if (header && Buffer.byteLength(text) >= header[0].length + Number(header[1])) {
        socket.end();
        let calls = 0;
        for (const match of text.matchAll(/calls=(\d+)/g)) calls += Number(match[1]);
        resolve(calls);
      }
    });
    socket.on('error', reject);
  });
}
