/**
 * The bubblewrap command line around a Codex child (docs/codex.md, "How a
 * child is confined"). Before it, a command Codex ran as the worker's user
 * could read /proc/<worker pid>/environ (DATABASE_URL, every token), the
 * operator's ~/.codex and every other conversation's workspace and home
 * (issue 30, finding 1): mode 0700 keeps out other users, not the same one.
 * Inside the sandbox the child has its own pid namespace (no worker in
 * /proc), a root of its own in which only what it needs to run is bound
 * read-only, and only its own conversation's workspace and home writable.
 * Pure: what exists on this machine is found by codex-sandbox.ts.
 */
import { dirname, sep } from 'node:path';
import { isInsideDirectory } from '@switchboard/core';
import { proxySocketInside } from './codex-net-bridge.ts';

/** A top-level system directory: bound read-only, or recreated as the symlink it is (a merged /usr: /bin → usr/bin). */
export interface SystemMount {
  path: string;
  symlinkTo?: string;
}

/** A path the child must never see; masked wherever a bound path would show it. */
export interface HiddenPath {
  path: string;
  kind: 'dir' | 'file';
}

export interface CodexSandboxPlan {
  /** The bubblewrap program (an absolute path). */
  bwrap: string;
  system: readonly SystemMount[];
  /** Bound read-only: the node install, the Codex command's package, CODEX_SANDBOX_READ_PATHS. */
  readOnly: readonly string[];
  /** Bound read-write: this conversation's workspace and home, CODEX_SANDBOX_WRITE_PATHS. */
  writable: readonly string[];
  /** The worker's HOME, the operator's Codex home, the worker's .env, the workspace and home roots. */
  hidden: readonly HiddenPath[];
  /** The child's working directory inside (its workspace; the same path as outside). */
  cwd: string;
  command: readonly string[];
  /** The private /tmp's size in bytes, where this bwrap can set one (`--size`). */
  tmpBytes?: number;
  /**
   * A network namespace of its own (loopback only) and the worker's proxy
   * socket bound in at `proxySocketInside`: CODEX_SANDBOX_NETWORK=provider
   * (codex-net-bridge.ts). Absent: the worker's network, shared.
   */
  netProxySocket?: string;
  /** `--unshare-net` without a socket: the start-up check of a worker that will isolate its children's network. */
  isolateNetwork?: boolean;
}

/**
 * Namespaces and limits. The network is added by `networkArgs`. `-try` where an unprivileged bubblewrap may not get one
 * (a setuid bwrap without user namespaces), so such a host still gets the
 * pid and mount isolation. `--cap-drop ALL` matters when the worker runs as
 * root: root in the sandbox would otherwise keep capabilities that reach
 * outside it (open_by_handle_at).
 */
const isolation = ['--die-with-parent', '--new-session', '--unshare-user-try', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--cap-drop', 'ALL'];

/**
 * What a program needs from /etc, and nothing else of it (no shadow, no
 * ssh keys, no credentials a package left there): name resolution, TLS
 * roots, users and groups by name, the dynamic linker's cache, Debian's
 * alternatives (/usr/bin/awk → /etc/alternatives/awk), time zone, the
 * shell's and git's system settings. Each bound only if present.
 */
export const etcEntries = [
  'alternatives', 'ssl', 'ca-certificates', 'ca-certificates.conf', 'pki', 'crypto-policies',
  'resolv.conf', 'hosts', 'host.conf', 'nsswitch.conf', 'gai.conf', 'services', 'protocols',
  'passwd', 'group', 'localtime', 'timezone', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d',
  'os-release', 'mime.types', 'gitconfig', 'profile', 'profile.d', 'bash.bashrc', 'inputrc', 'terminfo',
].map((name) => `/etc/${name}`);

type Mount = { order: number; path: string; args: string[] };

/** bwrap's whole argv: the program, the options, `--`, then the command. */
export function buildBwrapArgv(plan: CodexSandboxPlan): string[] {
  const system = plan.system.flatMap((mount) => (mount.symlinkTo ? ['--symlink', mount.symlinkTo, mount.path] : ['--ro-bind', mount.path, mount.path]));
  const etc = etcEntries.flatMap((path) => ['--ro-bind-try', path, path]);
  const systemShown = plan.system.filter((mount) => !mount.symlinkTo).map((mount) => mount.path);
  const shown = [...systemShown, ...plan.readOnly, ...plan.writable];
  // A node or a Codex under /usr is already there.
  const readOnly = [...new Set(plan.readOnly)].filter((path) => !systemShown.some((dir) => isWithin(dir, path)));
  const mounts: Mount[] = [
    ...readOnly.map((path) => ({ order: 0, path, args: ['--ro-bind', path, path] })),
    ...plan.writable.map((path) => ({ order: 0, path, args: ['--bind', path, path] })),
    ...plan.hidden.filter((hidden) => shown.some((path) => isWithin(path, hidden.path))).map((hidden) => ({ order: 1, path: hidden.path, args: maskOf(hidden) })),
  ];
  const tmp = [...(plan.tmpBytes ? ['--size', String(plan.tmpBytes)] : []), '--tmpfs', '/tmp'];
  return [plan.bwrap, ...isolation, ...networkArgs(plan), ...system, ...etc, '--proc', '/proc', '--dev', '/dev', ...tmp, ...orderMounts(mounts), ...proxyMount(plan), '--remount-ro', '/', '--chdir', plan.cwd, '--', ...plan.command];
}

/** Its own network namespace (bwrap brings its loopback up), or none: the worker's network. */
function networkArgs(plan: CodexSandboxPlan): string[] {
  return plan.netProxySocket || plan.isolateNetwork ? ['--unshare-net'] : [];
}

/** The proxy's socket, read-only: connecting to a socket needs no write access to its file system. */
function proxyMount(plan: CodexSandboxPlan): string[] {
  return plan.netProxySocket ? ['--ro-bind', plan.netProxySocket, proxySocketInside] : [];
}

/**
 * bwrap mounts in the order given, each over what is there: shallower paths
 * first, so a deeper one lands on top (this conversation's workspace inside
 * the masked workspace root; a Codex package inside the masked HOME), and at
 * one depth a mask after a bind, so a path that is both shown and hidden
 * stays hidden.
 */
function orderMounts(mounts: Mount[]): string[] {
  const depth = (path: string) => path.split(sep).filter(Boolean).length;
  return [...mounts].sort((a, b) => depth(a.path) - depth(b.path) || a.order - b.order).flatMap((mount) => mount.args);
}

/** A directory becomes an empty tmpfs; a file, /dev/null. */
function maskOf(hidden: HiddenPath): string[] {
  return hidden.kind === 'dir' ? ['--tmpfs', hidden.path] : ['--ro-bind', '/dev/null', hidden.path];
}

/** `path` is `root` or lies inside it. */
function isWithin(root: string, path: string): boolean {
  return path === root || isInsideDirectory(root, path);
}

/**
 * What of a command's file to show: a file inside `node_modules` brings its
 * package (an npm-installed `codex` is a bin script beside its native
 * binary), and a scoped one its whole scope (`@openai/codex` finds its
 * platform binary in a sibling `@openai/codex-linux-x64`); any other file
 * only itself. Anything else it needs is CODEX_SANDBOX_READ_PATHS.
 */
export function commandReadPath(realFile: string): string {
  const parts = realFile.split(sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0 || at + 1 >= parts.length - 1) return realFile;
  // `node_modules/<package>` or `node_modules/@<scope>`: the same two parts either way.
  return parts.slice(0, at + 2).join(sep);
}

/**
 * What of the node install to show: `<prefix>/bin/node` brings its prefix
 * (an nvm or tarball install keeps global packages under it, and `codex`'s
 * `#!/usr/bin/env node` finds this node on PATH), unless the prefix is `/`
 * or would show a hidden path (a node in ~/bin); then the binary alone.
 */
export function nodeReadPath(realNode: string, hidden: readonly HiddenPath[]): string {
  const bin = dirname(realNode);
  const prefix = dirname(bin);
  if (bin.split(sep).pop() !== 'bin' || prefix === sep || hidden.some((entry) => isWithin(prefix, entry.path))) return realNode;
  return prefix;
}
