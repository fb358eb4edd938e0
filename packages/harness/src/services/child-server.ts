import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';

export interface SpawnServerOptions {
  cwd: string;
  /** stdout and stderr are appended here, so a failed start can show why. */
  logFile: string;
  uid?: number;
  gid?: number;
  /** Sent if this process exits without stopping the server (a crashed run). */
  exitSignal: NodeJS.Signals;
}

const exitSignals = new Map<ChildProcess, NodeJS.Signals>();
let exitHookInstalled = false;

/**
 * Spawns a long-running server as a direct child. Servers are not
 * daemonised so that the pid we hold is the server itself, and so that a
 * test run that dies takes its servers with it instead of leaving them
 * holding ports.
 */
export function spawnServer(command: string, args: string[], options: SpawnServerOptions): ChildProcess {
  installExitHook();
  const log = openSync(options.logFile, 'a');
  try {
    const child = spawn(command, args, {
      cwd: options.cwd,
      stdio: ['ignore', log, log],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    });
    exitSignals.set(child, options.exitSignal);
    child.once('exit', () => exitSignals.delete(child));
    // Without a listener a failed spawn (ENOENT) would crash the test process.
    child.once('error', () => exitSignals.delete(child));
    return child;
  } finally {
    closeSync(log);
  }
}

export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null || !exitSignals.has(child);
}

/** Signals the child and waits for it to exit, escalating to SIGKILL after `timeoutMs`. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  if (hasExited(child)) return;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const outcome = await Promise.race([exited, timedOut]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}

export function tailLog(file: string, lines = 15): string {
  if (!existsSync(file)) return '(no log)';
  const text = readFileSync(file, 'utf8').trimEnd();
  return text === '' ? '(log is empty)' : text.split('\n').slice(-lines).join(' | ');
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [child, signal] of exitSignals) child.kill(signal);
  });
}
