import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** The repository's root: this file is packages/harness/src/processes.ts. */
export const repoRoot = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** What spawnCommand starts: `command args` in `cwd` (default the repository) with `env` added to this process's, its output appended to `logDir/<name>.log`. */
export interface CommandSpec {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  logDir: string;
  cwd?: string;
}

/** Starts `node --import tsx <entry>` with `env`, its output appended to `logDir/<name>.log`. */
export function spawnApp(name: string, entry: string, env: Record<string, string>, logDir: string): ManagedProcess {
  return spawnCommand({ name, command: process.execPath, args: tsxEntryArgs(entry), env, logDir });
}

/**
 * Node's arguments that run `entry` (relative to the repository) under tsx,
 * after `nodeArgs`: for flags Node refuses in NODE_OPTIONS, such as --cpu-prof.
 */
export function tsxEntryArgs(entry: string, nodeArgs: string[] = []): string[] {
  return [...nodeArgs, '--import', 'tsx', join(repoRoot, entry)];
}

export function spawnCommand({ name, command, args, env, logDir, cwd = repoRoot }: CommandSpec): ManagedProcess {
  mkdirSync(logDir, { recursive: true });
  const log = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  return {
    name,
    child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

/** Polls `url` until it answers 2xx; a bounded start-up wait, not a test synchronisation. */
export async function waitForHttp(url: string, timeoutMs: number, process?: ManagedProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (process && process.child.exitCode !== null) throw new Error(`${process.name} exited with code ${process.child.exitCode} during start-up`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}
