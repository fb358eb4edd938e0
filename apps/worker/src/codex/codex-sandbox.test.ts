import { mkdtemp, mkdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@switchboard/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCodexConfinement, confineChildEnv, type CodexConfinement, type SandboxConfig } from './codex-sandbox.ts';

// How the worker confines each Codex child (docs/codex.md, "How a child is confined"), with the bwrap installed here.
describe(confineChildEnv.name, () => {
  let base: string;
  let config: SandboxConfig;
  const log = createLogger('test', 'silent');
  const env = (home: string) => async () => ({ kind: 'ready' as const, env: { PATH: '/usr/bin:/bin', HOME: home } });

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'sb-confine-')));
    for (const dir of ['ws/3', 'homes/3']) await mkdir(join(base, dir), { recursive: true });
    config = { AGENT_RUNTIME: 'codex', CODEX_SANDBOX: 'bwrap', CODEX_SANDBOX_READ_PATHS: [], CODEX_SANDBOX_WRITE_PATHS: [], CODEX_WORKSPACES: join(base, 'ws'), CODEX_HOMES: join(base, 'homes'), CODEX_SANDBOX_NETWORK: 'provider', CODEX_SANDBOX_ALLOW_HOSTS: [], CODEX_ENV_PASSTHROUGH: [], CODEX_SANDBOX_USER: 'worker', CODEX_SANDBOX_UID_BASE: 2_000_000_000 };
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('wraps the command in bwrap under its guard and limits, started in the workspace, with only the workspace and home writable', async () => {
    const confinement = await checkCodexConfinement(config, log, { PATH: process.env.PATH, HOME: join(base, 'worker-home') });
    expect(confinement.kind).toBe('bwrap');
    const prepared = await confineChildEnv(env(join(base, 'homes/3')), Promise.resolve(confinement), async () => join(base, 'ws/3'))(3, ['sh', '-c', 'true']);
    if (prepared.kind !== 'ready') throw new Error(prepared.reason);
    const argv = prepared.argv ?? [];
    // The guard (ends the sandbox when the worker dies), a lower CPU priority, prlimit's limits, then bwrap.
    expect(argv.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(argv[3]).toBe('codex-sandbox-guard');
    const bwrapAt = argv.findIndex((arg) => arg.endsWith('/bwrap'));
    expect(argv[4]).toMatch(/\/nice$/);
    expect(argv.slice(5, 7)).toEqual(['-n', '10']);
    expect(argv[7]).toMatch(/\/prlimit$/);
    expect(argv.slice(8, bwrapAt)).toEqual(['--nproc=512', '--nofile=4096', `--data=${4096 * 1024 * 1024}`, `--fsize=${2048 * 1024 * 1024}`, '--']);
    // Under the bridge to the worker's proxy (CODEX_SANDBOX_NETWORK=provider), in a network of its own with the proxy's socket bound in.
    const command = argv.slice(argv.indexOf('--', bwrapAt) + 1);
    expect(command.slice(0, 2)).toEqual([await realpath(process.execPath), '-e']);
    expect(command.slice(3)).toEqual(['--', '/run/switchboard/codex-net.sock', await realpath('/bin/sh'), '-c', 'true']);
    expect(argv).toContain('--unshare-net');
    if (confinement.kind !== 'bwrap' || !confinement.net) throw new Error('no proxy started');
    expect(argv.slice(argv.indexOf('/run/switchboard/codex-net.sock') - 2, argv.indexOf('/run/switchboard/codex-net.sock') + 1)).toEqual(['--ro-bind', confinement.net.socketPath, '/run/switchboard/codex-net.sock']);
    await confinement.net.close();
    const writable = argv.flatMap((arg, i) => (arg === '--bind' ? [argv[i + 1]] : []));
    expect(writable).toEqual([join(base, 'ws/3'), join(base, 'homes/3')]);
    expect(argv.slice(argv.indexOf('--chdir'), argv.indexOf('--chdir') + 2)).toEqual(['--chdir', join(base, 'ws/3')]);
  });

  it('runs the command as it is when the operator set CODEX_SANDBOX=off, and spawns nothing when bwrap cannot run', async () => {
    const off = await confineChildEnv(env('/h'), Promise.resolve<CodexConfinement>({ kind: 'off' }), async () => '/w')(3, ['codex', 'app-server']);
    expect(off).toEqual({ kind: 'ready', env: { PATH: '/usr/bin:/bin', HOME: '/h' } });
    const unavailable = await confineChildEnv(env('/h'), Promise.resolve<CodexConfinement>({ kind: 'unavailable', reason: 'no bwrap' }), async () => '/w')(3, ['codex']);
    expect(unavailable).toEqual({ kind: 'failed', reason: 'CODEX_SANDBOX_UNAVAILABLE: no bwrap' });
  });

  it('rejects when the command is not found (the pool fails that turn, never the worker)', async () => {
    const confinement = await checkCodexConfinement(config, log, { PATH: process.env.PATH });
    const prepare = confineChildEnv(env(join(base, 'homes/3')), Promise.resolve(confinement), async () => join(base, 'ws/3'));
    await expect(prepare(3, ['no-such-codex', 'app-server'])).rejects.toThrow('no-such-codex (from CODEX_COMMAND) is not on PATH');
  });

  it('is unavailable, said once, when bwrap is not on PATH', async () => {
    expect(await checkCodexConfinement(config, log, { PATH: join(base, 'nothing') })).toEqual({ kind: 'unavailable', reason: 'bubblewrap (bwrap) is not on PATH' });
    expect(await checkCodexConfinement({ ...config, CODEX_SANDBOX: 'off' }, log, { PATH: join(base, 'nothing') })).toEqual({ kind: 'off' });
  });
});
