import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot, spawnCommand, tsxEntryArgs, type ManagedProcess } from '@switchboard/harness';

export interface ProfiledApp {
  name: string;
  /** Relative to the repository, run under tsx. */
  entry: string;
  env: Record<string, string>;
  logDir: string;
  profileDir: string;
}

/**
 * spawnApp with `--cpu-prof`: the profile is written to `profileDir` when the
 * process exits normally (SIGTERM → graceful exit).
 */
export function spawnProfiledApp({ name, entry, env, logDir, profileDir }: ProfiledApp): ManagedProcess {
  mkdirSync(profileDir, { recursive: true });
  return spawnCommand({ name, command: process.execPath, args: tsxEntryArgs(entry, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]), env, logDir });
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileFrame {
  /** function (file:line), the file relative to the repo or node_modules. */
  frame: string;
  /** Share of the sampled time that was not idle. */
  selfShare: number;
}

export interface ProfileSummary {
  file: string;
  /** Sampled time outside (idle), in ms. */
  busyMs: number;
  /** The span the samples were taken from, in ms. */
  windowMs: number;
  topFrames: ProfileFrame[];
  /** Self time grouped by package (node_modules/<name>), "switchboard" for our code, "node" for Node's internals. */
  byPackage: ProfileFrame[];
}

/** A span of CLOCK_MONOTONIC time in µs, the clock of V8's profile timestamps and of process.hrtime. */
export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

/** Now on the profiles' clock. */
export function monotonicNowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Self time per function and per package from the newest .cpuprofile in
 * `dir`, counting only samples inside `window` when given: a whole-life
 * profile is mostly start-up (tsx compiling every module), not the hot path.
 */
export function summarizeCpuProfile(dir: string, window?: ProfileWindow, top = 12): ProfileSummary | undefined {
  let files: string[];
  try {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread; tsx's module loader runs in another.
    files = readdirSync(dir)
      .filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f))
      .sort();
  } catch {
    return undefined;
  }
  const file = files.at(-1);
  if (!file) return undefined;
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };
  const hitsByNode = new Map<number, number>();
  let at = profile.startTime;
  let windowSamples = 0;
  for (const [i, nodeId] of profile.samples.entries()) {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.fromUs || at > window.toUs)) continue;
    hitsByNode.set(nodeId, (hitsByNode.get(nodeId) ?? 0) + 1);
    windowSamples += 1;
  }
  const spanUs = window ? Math.min(window.toUs, profile.endTime) - Math.max(window.fromUs, profile.startTime) : profile.endTime - profile.startTime;
  const msPerSample = windowSamples > 0 ? spanUs / 1000 / windowSamples : 0;
  const byFrame = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let busySamples = 0;
  for (const node of profile.nodes) {
    const hits = hitsByNode.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (hits === 0 || functionName === '(idle)') continue;
    busySamples += hits;
    const where = describeUrl(url);
    const frame = url ? `${functionName || '(anonymous)'} (${where}:${lineNumber + 1})` : functionName || '(anonymous)';
    byFrame.set(frame, (byFrame.get(frame) ?? 0) + hits);
    const pkg = packageOf(url, functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hits);
  }
  const rank = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([frame, hits]) => ({ frame, selfShare: busySamples > 0 ? hits / busySamples : 0 }));
  return { file: join(dir, file), busyMs: busySamples * msPerSample, windowMs: spanUs / 1000, topFrames: rank(byFrame, top), byPackage: rank(byPackage, 10) };
}

function describeUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const nodeModules = path.lastIndexOf('node_modules/');
  if (nodeModules >= 0) return path.slice(nodeModules + 'node_modules/'.length);
  return path.startsWith(repoRoot) ? relative(repoRoot, path) : path;
}

function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : 'native';
  if (url.startsWith('node:')) return 'node';
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1] as string;
  return url.includes(repoRoot) ? 'switchboard' : 'other';
}
