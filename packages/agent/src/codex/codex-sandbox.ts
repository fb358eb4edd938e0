/**
 * What the bubblewrap sandbox of a Codex child needs from this machine
 * (docs/codex.md, "How a child is confined"): whether bwrap is there and
 * works, which system directories exist, where the command's files really
 * are. The command line itself is codex-sandbox-argv.ts (pure).
 */
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, lstat, readlink, realpath, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { buildBwrapArgv, commandReadPath, nodeReadPath, type HiddenPath, type SystemMount } from './codex-sandbox-argv.ts';
import { bridgeArgv } from './codex-net-bridge.ts';
import { guardSandboxArgv } from './codex-sandbox-guard.ts';
import { userArgv } from './codex-sandbox-user.ts';
import { bwrapSupportsSize, childLimits, limitArgv, niceArgv } from './codex-sandbox-limits.ts';

export interface CodexSandboxSettings {
  /** The bubblewrap program, as `checkCodexSandbox` found it. */
  bwrap: string;
  /** CODEX_SANDBOX_READ_PATHS and CODEX_SANDBOX_WRITE_PATHS (absolute; missing ones are left out). */
  readPaths: readonly string[];
  writePaths: readonly string[];
  /** Never shown, wherever they exist: the worker's HOME, the operator's Codex home, the worker's .env, the workspace and home roots. */
  hiddenPaths: readonly string[];
  /** The node the worker runs (process.execPath): a bin script's `env node` must find one. */
  nodePath: string;
  /** The PATH the command's program is looked up on (the child's). */
  searchPath: string;
  /**
   * CODEX_SANDBOX_NETWORK=provider: the worker's proxy socket
   * (codex-net-proxy.ts); each child gets a network of its own and reaches
   * out only through it, under the bridge (codex-net-bridge.ts). Absent: the
   * worker's network (`shared`).
   */
  netProxySocket?: string;
  /** A root worker's children each run as a uid of their own (codex-sandbox-user.ts): the `setpriv` program. */
  setpriv?: string;
}

/** This conversation's own directories (real paths): the only ones the child may write besides CODEX_SANDBOX_WRITE_PATHS. */
export interface SandboxedDirs {
  workspace: string;
  home: string;
  /** The uid the child runs as, with `setpriv` (a root worker); absent: the worker's. */
  uid?: number;
}

export type SandboxCheck = { ok: true; bwrap: string } | { ok: false; code: 'CODEX_SANDBOX_UNAVAILABLE'; reason: string; fix: string };

const optOut = 'or set CODEX_SANDBOX=off to run Codex children unconfined (docs/codex.md, "How a child is confined")';

/** Top-level directories the system's programs live in; on a merged-/usr system all but /usr are symlinks into it. */
const systemDirs = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * Finds bwrap on `searchPath` and runs it once (`true` in the same
 * namespaces a child gets): a bwrap that is installed but may not create
 * user namespaces here fails only when run, so only running it tells.
 */
export async function checkCodexSandbox(searchPath: string, options: { isolateNetwork?: boolean; timeoutMs?: number; runAs?: { setpriv: string; uid: number } } = {}): Promise<SandboxCheck> {
  const { isolateNetwork = false, timeoutMs = 10_000, runAs } = options;
  const bwrap = await findExecutable('bwrap', searchPath);
  if (!bwrap) return { ok: false, code: 'CODEX_SANDBOX_UNAVAILABLE', reason: 'bubblewrap (bwrap) is not on PATH', fix: `install it (apt-get install bubblewrap) ${optOut}` };
  const bwrapArgv = buildBwrapArgv({ bwrap, system: await findSystemMounts(), readOnly: [], writable: [], hidden: [], cwd: '/', command: ['true'], isolateNetwork });
  // As the children will run it: a root worker's as another uid, where bwrap needs unprivileged user namespaces.
  const argv = runAs ? userArgv(runAs.setpriv, runAs.uid, bwrapArgv) : bwrapArgv;
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile(argv[0] as string, argv.slice(1), { timeout: timeoutMs, env: { PATH: '/usr/bin:/bin' } }, (error, _stdout, stderr) => {
      resolve(error ? (stderr.trim().split('\n')[0] || error.message) : undefined);
    });
  });
  if (failure === undefined) return { ok: true, bwrap };
  return {
    ok: false,
    code: 'CODEX_SANDBOX_UNAVAILABLE',
    reason: `${bwrap} cannot create its sandbox here (${failure})`,
    fix: `allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; Ubuntu 23.10+: an AppArmor profile for bwrap; in a container: a seccomp profile that permits them) ${optOut}`,
  };
}

/**
 * The child's command line inside bubblewrap: its program by its real path
 * (a PATH lookup inside would see another PATH), shown with its package,
 * the node install, this conversation's workspace and home, and nothing of
 * the worker's, under the guard that ends it when the worker dies
 * (codex-sandbox-guard.ts). A program that cannot be found is an Error (the
 * turn fails as a child that cannot start).
 */
export async function wrapCodexCommand(settings: CodexSandboxSettings, argv: readonly string[], dirs: SandboxedDirs): Promise<string[]> {
  const [program, ...args] = argv;
  const found = program ? await findExecutable(program, settings.searchPath) : undefined;
  if (!found) throw new Error(`${program ?? ''} (from CODEX_COMMAND) is not ${program?.includes('/') ? 'an executable file' : 'on PATH'}`);
  const realProgram = await realpath(found);
  const hidden = await findHidden(settings.hiddenPaths);
  const named = await existingRealPaths(args.filter((arg) => isAbsolute(arg)));
  const realNode = await realpath(settings.nodePath);
  const readOnly = [nodeReadPath(realNode, hidden), commandReadPath(realProgram), ...named.map(commandReadPath), ...(await existingRealPaths(settings.readPaths))];
  const command = [realProgram, ...args];
  const bwrapArgv = buildBwrapArgv({
    bwrap: settings.bwrap,
    system: await findSystemMounts(),
    readOnly: [...new Set(readOnly)],
    writable: [dirs.workspace, dirs.home, ...(await existingRealPaths(settings.writePaths))],
    hidden,
    cwd: dirs.workspace,
    command: settings.netProxySocket ? bridgeArgv(realNode, command) : command,
    tmpBytes: (await bwrapSupportsSize(settings.bwrap)) ? childLimits.tmpBytes : undefined,
    netProxySocket: settings.netProxySocket,
  });
  // Where util-linux's prlimit or coreutils' nice is missing the child runs without its rlimits or at the worker's
  // priority (docs/codex.md, "What a child may use").
  const [prlimit, nice] = await Promise.all([findExecutable('prlimit', settings.searchPath), findExecutable('nice', settings.searchPath)]);
  const limited = prlimit ? limitArgv(prlimit, bwrapArgv) : bwrapArgv;
  const niced = nice ? niceArgv(nice, limited) : limited;
  return guardSandboxArgv(settings.setpriv && dirs.uid !== undefined ? userArgv(settings.setpriv, dirs.uid, niced) : niced);
}

/** The program's path: as given when it names a path, else the first executable file of that name on `path`. */
export async function findExecutable(program: string, path: string): Promise<string | undefined> {
  const candidates = program.includes('/') ? [program] : path.split(delimiter).filter(Boolean).map((dir) => join(dir, program));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** Each system directory that exists: a directory, or the symlink it is. */
export async function findSystemMounts(): Promise<SystemMount[]> {
  const mounts: SystemMount[] = [];
  for (const path of systemDirs) {
    const found = await lstat(path).catch(() => undefined);
    if (found?.isSymbolicLink()) mounts.push({ path, symlinkTo: await readlink(path) });
    else if (found?.isDirectory()) mounts.push({ path });
  }
  return mounts;
}

/** The hidden paths that exist, by their real paths (binds are real paths too), each a directory or a file. */
async function findHidden(paths: readonly string[]): Promise<HiddenPath[]> {
  const hidden: HiddenPath[] = [];
  for (const path of await existingRealPaths(paths)) {
    const found = await stat(path).catch(() => undefined);
    if (found) hidden.push({ path, kind: found.isDirectory() ? 'dir' : 'file' });
  }
  return hidden;
}

async function existingRealPaths(paths: readonly string[]): Promise<string[]> {
  const real = await Promise.all(paths.map((path) => realpath(path).catch(() => undefined)));
  return real.filter((path): path is string => path !== undefined);
}
