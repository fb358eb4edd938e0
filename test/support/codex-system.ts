import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '@switchboard/harness';
import { waitForCondition } from './turn-helpers.ts';
import { afterAll, beforeAll } from 'vitest';
import { TestSystem } from './system.ts';

// Worker processes with AGENT_RUNTIME=codex against the fake app-server of apps/sim (docs/codex.md):
// the env that points a worker at the fake, and the fake's log of every message it received.

export const fakeCodexCommand = `"${process.execPath}" "${join(repoRoot, 'apps/sim/bin/fake-codex-app-server.mjs')}"`;

/**
 * The fake as one plain JavaScript file, built into `dir/bin` (readable in the
 * Codex sandbox: codexSetup lists it in CODEX_SANDBOX_READ_PATHS), and the command
 * that runs it: a child then starts without tsx's loader and its esbuild
 * service, about 0.15 s of CPU instead of 0.6 s (measured on the two-core
 * machine), which counts where a test starts dozens of children while
 * workers restart (the randomized scenarios, turn-scenarios.e2e.test.ts).
 */
export async function bundleFakeCodex(dir: string): Promise<string> {
  const outfile = join(dir, 'bin', 'fake-codex-app-server.mjs');
  await build({ entryPoints: [join(repoRoot, 'apps/sim/src/codex/fake-codex-main.ts')], bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'silent' });
  return `"${process.execPath}" "${outfile}"`;
}

/** What the fake reads besides node: its own sources, tsx (and its dependencies) and the tsconfig its sources extend. */
export const fakeCodexReadPaths = ['apps/sim', 'node_modules', 'tsconfig.base.json'].map((path) => join(repoRoot, path));

/** One line of the fake's log: a request or notification we sent, or our answer to its own request. */
export interface Logged {
  /** The fake's pid as it sees it: in the Codex sandbox (its own pid namespace) the same for every fake, so use `instance`. */
  pid: number;
  /** Which fake process: one id per process (`isFakeRunning` finds it by its title). */
  instance: string;
  /** When the fake read it (ms, its clock: the host's). */
  at?: number;
  /** For our answer to one of its requests: that request's method and what it asked about. */
  answering?: { method: string; command?: unknown; itemId?: unknown };
  received: {
    id?: number | string;
    method?: string;
    params?: Record<string, unknown>;
    result?: Record<string, unknown>;
    error?: { code?: number; message?: string };
  };
}

/**
 * A throwaway dir for the fake's threads, its log, the workspaces and the
 * conversations' homes; the env that points a worker at them. `codexEnv` is
 * only that (a worker whose default runtime stays openai can still run the
 * conversations switched to codex); `workerEnv` adds AGENT_RUNTIME=codex and
 * quick restarts.
 */
export function codexSetup(extra: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'codex-e2e-'));
  const [stateDir, logDir, binDir] = [join(dir, 'state'), join(dir, 'log'), join(dir, 'bin')];
  for (const made of [stateDir, logDir, binDir]) mkdirSync(made);
  const logFile = join(logDir, 'fake-codex.jsonl');
  // A root worker runs each conversation's child as a uid of its own (docs/codex.md, "The child's user"): the fakes
  // of all conversations read the bundle and share the state and the log.
  writeFileSync(logFile, '');
  for (const [path, mode] of [[dir, 0o755], [binDir, 0o755], [stateDir, 0o1777], [logDir, 0o1777], [logFile, 0o666]] as const) chmodSync(path, mode);
  const codexEnv = {
    CODEX_COMMAND: fakeCodexCommand,
    CODEX_WORKSPACES: join(dir, 'workspaces'),
    CODEX_HOMES: join(dir, 'homes'),
    // The fake runs in the Codex sandbox like a real child (docs/codex.md, "How a child is confined"): it reads its
    // sources and tsx from the repository, and writes its threads and its log, shared by every fake of the test.
    CODEX_SANDBOX_READ_PATHS: [...fakeCodexReadPaths, binDir].join(','),
    CODEX_SANDBOX_WRITE_PATHS: `${stateDir},${logDir}`,
    // A child gets only its allow-list (docs/codex.md, "What a child gets"): the fake's own settings are passed on by name.
    CODEX_ENV_PASSTHROUGH: 'FAKE_CODEX_STATE_DIR,FAKE_CODEX_LOG',
    FAKE_CODEX_STATE_DIR: stateDir,
    FAKE_CODEX_LOG: logFile,
    ...childUserSetting(),
  };
  const workerEnv = {
    AGENT_RUNTIME: 'codex',
    ...codexEnv,
    DRAIN_TIMEOUT_MS: '300',
    HEARTBEAT_INTERVAL_MS: '200',
    WORKER_DEAD_AFTER_MS: '1500',
    SWEEP_INTERVAL_MS: '300',
    ...extra,
  };
  const readLog = (): Logged[] => {
    let text: string;
    try {
      text = readFileSync(logFile, 'utf8');
    } catch {
      return [];
    }
    // A line another fake process is appending right now may be cut: it is left out, the rest kept.
    return text.split('\n').flatMap((line) => {
      try {
        return line === '' ? [] : [JSON.parse(line) as Logged];
      } catch {
        return [];
      }
    });
  };
  return { dir, codexEnv, workerEnv, readLog, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export type CodexSetup = ReturnType<typeof codexSetup>;

/**
 * Children of a root worker run as other uids, which must reach the fake's files: the checkout and node must lie
 * where any user may pass (each directory above them `o+x`). Where they do not (a checkout under /root), the
 * children run as root instead, said once: what the test then checks holds for a worker run as CODEX_SANDBOX_USER=worker.
 */
export function childUserSetting(): { CODEX_SANDBOX_USER?: 'worker' } {
  if (process.getuid?.() !== 0 || [repoRoot, process.execPath].every(isReachableByAnyone)) return {};
  if (!warnedChildUser) process.stderr.write(`codex-system: ${repoRoot} or ${process.execPath} is not reachable by other users: Codex children run as root (CODEX_SANDBOX_USER=worker)\n`);
  warnedChildUser = true;
  return { CODEX_SANDBOX_USER: 'worker' };
}

let warnedChildUser = false;

function isReachableByAnyone(path: string): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === dirname(dir)) return true;
  }
}

/** The turn/start the fake received for a message (its text ends with the user's words). */
export function turnStartsFor(setup: CodexSetup, text: string): Logged[] {
  return setup.readLog().filter((m) => m.received.method === 'turn/start' && JSON.stringify(m.received.params ?? {}).includes(text));
}

export async function waitForTurnStart(setup: CodexSetup, text: string): Promise<Logged> {
  await waitForCondition(`the fake to receive turn/start for "${text}"`, async () => turnStartsFor(setup, text).length > 0, 20_000);
  return turnStartsFor(setup, text)[0] as Logged;
}

/** The decisions we sent the fake (this `instance`) in answer to its approval requests, in order. */
export function decisionsSent(setup: CodexSetup, instance: string): string[] {
  return setup.readLog().flatMap((m) => (m.instance === instance && typeof m.received.result?.decision === 'string' ? [m.received.result.decision] : []));
}

/** Whether the fake process `instance` still runs: its title (`fake-codex <instance>`) is in some process's command line, seen from outside any sandbox. */
export function isFakeRunning(instance: string): boolean {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .some((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(`fake-codex ${instance}`);
      } catch {
        return false;
      }
    });
}

/**
 * One describe block's worker processes on the fake app-server: a fresh
 * codexSetup(extra) and TestSystem before its tests, both closed after. Read
 * `system` and `setup` inside the tests (they exist once beforeAll ran).
 */
export function useCodexSystem(extra: Record<string, string> = {}): { readonly system: TestSystem; readonly setup: CodexSetup } {
  let system: TestSystem | undefined;
  let setup: CodexSetup | undefined;
  beforeAll(async () => {
    setup = codexSetup(extra);
    system = await TestSystem.start({ workerProcesses: true, workerEnv: setup.workerEnv });
  });
  afterAll(async () => {
    await system?.close();
    setup?.cleanup();
  });
  return {
    get system() {
      if (!system) throw new Error('the Codex system is read before beforeAll started it');
      return system;
    },
    get setup() {
      if (!setup) throw new Error('the Codex setup is read before beforeAll made it');
      return setup;
    },
  };
}
