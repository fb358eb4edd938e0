/**
 * Resource limits of a Codex child and every command it runs (docs/codex.md,
 * "What a child may use"). Without root there are no cgroups to set, so what
 * holds is what an unprivileged process may set on itself and pass on:
 * rlimits, through util-linux's `prlimit` around bwrap, and a size on the
 * sandbox's private /tmp (memory otherwise). Each rlimit bounds one process
 * (its data, its open files, a file it writes), except the process count,
 * which counts the processes of one user in one user namespace: the sandbox's
 * own when bwrap made one, and never for a worker running as root (the
 * kernel exempts the host's root; run the worker as an ordinary user).
 */
import { execFile } from 'node:child_process';

const mib = 1024 * 1024;

/** Enough for Codex (about 0.3 GB resident in a turn), git, a build or a test run; not for a machine's worth. */
export const childLimits = {
  processes: 512,
  openFiles: 4096,
  /** Per process: brk and private writable mappings (a V8 or Rust heap). */
  dataBytes: 4096 * mib,
  /** The largest file a process may write, in its workspace or anywhere. */
  fileBytes: 2048 * mib,
  /** The private /tmp (a tmpfs: memory). */
  tmpBytes: 512 * mib,
  /**
   * The CPU priority of the child and everything it runs: below the worker,
   * the gateway and the databases (niceness 0), so that commands that keep
   * every core busy (a build, a fork of busy loops) take what those leave and
   * cannot stall the worker's heartbeat and turns (issue 30, findings 1 and
   * 3). A priority, not a cap: on an idle machine a child may use it all.
   */
  niceness: 10,
} as const;

/** `argv` run under prlimit with the child's limits. */
export function limitArgv(prlimit: string, argv: readonly string[]): string[] {
  const { processes, openFiles, dataBytes, fileBytes } = childLimits;
  return [prlimit, `--nproc=${processes}`, `--nofile=${openFiles}`, `--data=${dataBytes}`, `--fsize=${fileBytes}`, '--', ...argv];
}

/** `argv` run at the child's lower CPU priority (coreutils' `nice`). */
export function niceArgv(nice: string, argv: readonly string[]): string[] {
  return [nice, '-n', String(childLimits.niceness), ...argv];
}

const sizeSupport = new Map<string, Promise<boolean>>();

/** Whether this bwrap knows `--size` for a tmpfs (0.7.0 and later; Ubuntu 22.04's 0.6.1 does not): asked once per program. */
export function bwrapSupportsSize(bwrap: string): Promise<boolean> {
  let known = sizeSupport.get(bwrap);
  if (!known) {
    known = new Promise((resolve) => {
      execFile(bwrap, ['--help'], { timeout: 10_000 }, (_error, stdout) => resolve(String(stdout).includes('--size')));
    });
    sizeSupport.set(bwrap, known);
  }
  return known;
}
