import { describe, expect, it } from 'vitest';
import { buildBwrapArgv, commandReadPath, nodeReadPath, type CodexSandboxPlan } from './codex-sandbox-argv.ts';

const plan: CodexSandboxPlan = {
  bwrap: '/usr/bin/bwrap',
  system: [{ path: '/usr' }, { path: '/bin', symlinkTo: 'usr/bin' }, { path: '/lib64' }],
  readOnly: ['/opt/node', '/usr/local/lib/node_modules/@openai'],
  writable: ['/srv/ws/7', '/srv/homes/7'],
  hidden: [
    { path: '/home/worker', kind: 'dir' },
    { path: '/srv/ws', kind: 'dir' },
    { path: '/srv/homes', kind: 'dir' },
  ],
  cwd: '/srv/ws/7',
  command: ['/opt/node/bin/node', '/opt/codex/codex.js', 'app-server'],
};

/** The options before `--`, as [option, ...its arguments] groups of the mount options only. */
function mountsOf(argv: string[]): string[][] {
  const options = argv.slice(1, argv.indexOf('--'));
  const arity: Record<string, number> = { '--ro-bind': 2, '--ro-bind-try': 2, '--bind': 2, '--symlink': 2, '--tmpfs': 1, '--proc': 1, '--dev': 1, '--remount-ro': 1, '--chdir': 1, '--cap-drop': 1 };
  const groups: string[][] = [];
  for (let i = 0; i < options.length; ) {
    const option = options[i] as string;
    const count = arity[option] ?? 0;
    groups.push(options.slice(i, i + 1 + count));
    i += 1 + count;
  }
  return groups;
}

describe(buildBwrapArgv.name, () => {
  it('runs the command by bwrap in new pid, user, ipc and uts namespaces that die with the worker, with no capabilities', () => {
    const argv = buildBwrapArgv(plan);
    expect(argv[0]).toBe('/usr/bin/bwrap');
    expect(argv.slice(argv.indexOf('--') + 1)).toEqual(plan.command);
    for (const flag of ['--die-with-parent', '--unshare-pid', '--unshare-user-try', '--unshare-ipc', '--unshare-uts', '--new-session']) expect(argv).toContain(flag);
    expect(mountsOf(argv)).toContainEqual(['--cap-drop', 'ALL']);
    // Without a proxy socket (CODEX_SANDBOX_NETWORK=shared) the network is the worker's.
    expect(argv).not.toContain('--unshare-net');
    expect(argv).not.toContain('--unshare-all');
  });

  it('gives a network of its own with the worker’s proxy socket bound in read-only, when given one (CODEX_SANDBOX_NETWORK=provider)', () => {
    const argv = buildBwrapArgv({ ...plan, netProxySocket: '/tmp/sb-codex-net-x/proxy.sock' });
    expect(argv).toContain('--unshare-net');
    const mounts = mountsOf(argv);
    expect(mounts).toContainEqual(['--ro-bind', '/tmp/sb-codex-net-x/proxy.sock', '/run/switchboard/codex-net.sock']);
    // After the private /tmp, which would otherwise cover it, and before the root turns read-only.
    const at = (entry: string[]) => mounts.findIndex((m) => m.join(' ') === entry.join(' '));
    expect(at(['--ro-bind', '/tmp/sb-codex-net-x/proxy.sock', '/run/switchboard/codex-net.sock'])).toBeGreaterThan(at(['--tmpfs', '/tmp']));
    expect(mounts.at(-2)).toEqual(['--remount-ro', '/']);
    expect(buildBwrapArgv({ ...plan, isolateNetwork: true })).toContain('--unshare-net');
  });

  it('shows the system read-only, /etc only in part, a /proc of its own, a private /tmp, and starts in the workspace', () => {
    const mounts = mountsOf(buildBwrapArgv(plan));
    expect(mounts).toContainEqual(['--ro-bind', '/usr', '/usr']);
    expect(mounts).toContainEqual(['--symlink', 'usr/bin', '/bin']);
    expect(mounts).toContainEqual(['--ro-bind-try', '/etc/resolv.conf', '/etc/resolv.conf']);
    expect(mounts).toContainEqual(['--ro-bind-try', '/etc/ssl', '/etc/ssl']);
    const bound = mounts.filter((m) => m[0]?.includes('bind')).map((m) => m[1]);
    for (const never of ['/', '/etc', '/etc/shadow', '/home', '/root', '/proc', '/var']) expect(bound, never).not.toContain(never);
    expect(mounts).toContainEqual(['--proc', '/proc']);
    expect(mounts).toContainEqual(['--tmpfs', '/tmp']);
    expect(mounts.at(-2)).toEqual(['--remount-ro', '/']);
    expect(mounts.at(-1)).toEqual(['--chdir', '/srv/ws/7']);
  });

  it('sizes the private /tmp where a size is given (bwrap 0.7.0 and later)', () => {
    const argv = buildBwrapArgv({ ...plan, tmpBytes: 1024 });
    const at = argv.indexOf('--size');
    expect(argv.slice(at, at + 4)).toEqual(['--size', '1024', '--tmpfs', '/tmp']);
    expect(buildBwrapArgv(plan)).not.toContain('--size');
  });

  it('binds only this conversation’s workspace and home writable, over its masked roots', () => {
    const mounts = mountsOf(buildBwrapArgv({ ...plan, readOnly: [...plan.readOnly, '/srv'] }));
    const writable = mounts.filter((m) => m[0] === '--bind').map((m) => m[1]);
    expect(writable).toEqual(['/srv/ws/7', '/srv/homes/7']);
    // /srv is shown, so the roots in it are emptied first and only this conversation's directories come back on top.
    const at = (group: string[]) => mounts.findIndex((m) => m.join(' ') === group.join(' '));
    expect(at(['--ro-bind', '/srv', '/srv'])).toBeLessThan(at(['--tmpfs', '/srv/ws']));
    expect(at(['--tmpfs', '/srv/ws'])).toBeLessThan(at(['--bind', '/srv/ws/7', '/srv/ws/7']));
    expect(at(['--tmpfs', '/srv/homes'])).toBeLessThan(at(['--bind', '/srv/homes/7', '/srv/homes/7']));
  });

  it('masks a hidden path only where a shown path would show it: a directory with an empty tmpfs, a file with /dev/null', () => {
    const mounts = mountsOf(
      buildBwrapArgv({ ...plan, readOnly: ['/home', '/repo'], hidden: [{ path: '/home/worker', kind: 'dir' }, { path: '/repo/.env', kind: 'file' }, { path: '/root/.codex', kind: 'dir' }] }),
    );
    expect(mounts).toContainEqual(['--tmpfs', '/home/worker']);
    expect(mounts).toContainEqual(['--ro-bind', '/dev/null', '/repo/.env']);
    // Nothing shows /root: nothing to mask.
    expect(mounts.some((m) => m.includes('/root/.codex'))).toBe(false);
  });

  it('keeps a path that is both shown and hidden hidden, and shows a package inside a hidden home on top of the mask', () => {
    const mounts = mountsOf(
      buildBwrapArgv({ ...plan, readOnly: ['/home/worker', '/home/worker/.nvm/node/lib/node_modules/@openai'], hidden: [{ path: '/home/worker', kind: 'dir' }] }),
    );
    const order = mounts.filter((m) => m.includes('/home/worker') || m.some((arg) => arg.startsWith('/home/worker/'))).map((m) => m.slice(0, 2).join(' '));
    expect(order).toEqual(['--ro-bind /home/worker', '--tmpfs /home/worker', '--ro-bind /home/worker/.nvm/node/lib/node_modules/@openai']);
  });

  it('does not bind again what the system directories already show', () => {
    const mounts = mountsOf(buildBwrapArgv({ ...plan, readOnly: ['/usr', '/usr/bin/node', '/usr/local/lib/node_modules/@openai', '/opt/x', '/opt/x'] }));
    expect(mounts.filter((m) => m[0] === '--ro-bind').map((m) => m[1])).toEqual(['/usr', '/lib64', '/opt/x']);
  });
});

describe(commandReadPath.name, () => {
  it('shows a file in node_modules with its package, a scoped one with its scope (sibling platform packages)', () => {
    expect(commandReadPath('/usr/local/lib/node_modules/@openai/codex/bin/codex.js')).toBe('/usr/local/lib/node_modules/@openai');
    expect(commandReadPath('/home/u/.nvm/v20/lib/node_modules/codex-cli/bin/run.js')).toBe('/home/u/.nvm/v20/lib/node_modules/codex-cli');
    expect(commandReadPath('/srv/app/node_modules/@openai/codex/node_modules/@openai/codex-linux-x64/vendor/codex')).toBe(
      '/srv/app/node_modules/@openai/codex/node_modules/@openai',
    );
  });

  it('shows any other file alone', () => {
    expect(commandReadPath('/opt/codex/bin/codex')).toBe('/opt/codex/bin/codex');
    expect(commandReadPath('/srv/node_modules/loose-file.js')).toBe('/srv/node_modules/loose-file.js');
  });
});

describe(nodeReadPath.name, () => {
  it('shows the install prefix of <prefix>/bin/node, else the binary alone', () => {
    expect(nodeReadPath('/opt/node-v20/bin/node', [])).toBe('/opt/node-v20');
    expect(nodeReadPath('/home/u/.nvm/versions/node/v20/bin/node', [{ path: '/home/u', kind: 'dir' }])).toBe('/home/u/.nvm/versions/node/v20');
    expect(nodeReadPath('/bin/node', [])).toBe('/bin/node');
    expect(nodeReadPath('/opt/node', [])).toBe('/opt/node');
    // A node in ~/bin: its prefix is the hidden HOME, which must not be shown for it.
    expect(nodeReadPath('/home/u/bin/node', [{ path: '/home/u', kind: 'dir' }])).toBe('/home/u/bin/node');
  });
});
