import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCodex, checkCodexConfinement } from '../../scripts/lib/doctor-codex.ts';

// `npm run doctor`'s codex line (docs/codex.md, "Set-up"), on a real file system.
describe('the doctor checks the Codex set-up', () => {
  let dir: string;
  let fakeCodex: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-doctor-codex-'));
    fakeCodex = join(dir, 'codex');
    await writeFile(fakeCodex, '#!/bin/sh\nexit 0\n');
    await chmod(fakeCodex, 0o755);
    await writeFile(join(dir, 'a-file'), '');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string>) => ({ AGENT_RUNTIME: 'codex', PATH: dir, CODEX_WORKSPACES: join(dir, 'ws', 'deeper'), ...extra });

  it('is skipped when AGENT_RUNTIME is not codex', async () => {
    expect(await checkCodex({ PATH: dir })).toMatchObject({ name: 'codex', status: 'skip' });
  });

  it('finds the program on PATH or as a path, and a workspace root it can create', async () => {
    expect(await checkCodex(env({}))).toMatchObject({ status: 'ok', detail: `codex found at ${fakeCodex}; workspaces under ${join(dir, 'ws', 'deeper')}` });
    expect(await checkCodex(env({ CODEX_COMMAND: `"${fakeCodex}" app-server`, PATH: '' }))).toMatchObject({ status: 'ok' });
  });

  it('fails, saying how to install Codex, when the program is not there', async () => {
    const missing = await checkCodex(env({ PATH: dirname(dir) }));
    expect(missing).toMatchObject({ status: 'fail', detail: 'codex (from CODEX_COMMAND) is not on PATH' });
    expect(missing.fix).toContain('npm i -g @openai/codex');
    expect(await checkCodex(env({ CODEX_COMMAND: join(dir, 'nope') }))).toMatchObject({ status: 'fail', detail: `${join(dir, 'nope')} (from CODEX_COMMAND) is not an executable file` });
    expect(await checkCodex(env({ CODEX_COMMAND: '"codex app-server' }))).toMatchObject({ status: 'fail', detail: 'CODEX_COMMAND has an unterminated quote' });
  });

  it('fails when the workspace root cannot be a directory', async () => {
    const under = join(dir, 'a-file', 'ws');
    expect(await checkCodex(env({ CODEX_WORKSPACES: under }))).toMatchObject({ status: 'fail', detail: `CODEX_WORKSPACES ${under}: ${join(dir, basename(join(dir, 'a-file')))} is not a directory` });
    expect(await checkCodex(env({ CODEX_HOMES: under }))).toMatchObject({ status: 'fail', detail: `CODEX_HOMES ${under}: ${join(dir, 'a-file')} is not a directory` });
  });
});

// `npm run doctor`'s codex sandbox line (docs/codex.md, "How a child is confined"): bubblewrap really run once.
describe('the doctor checks the Codex sandbox', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-doctor-bwrap-'));
    // A bwrap that is installed but refused its namespaces, as on a host without unprivileged user namespaces.
    await writeFile(join(dir, 'bwrap'), '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n');
    await chmod(join(dir, 'bwrap'), 0o755);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs bwrap once and says it works (bubblewrap is installed here, as in CI)', async () => {
    expect(await checkCodexConfinement({ AGENT_RUNTIME: 'codex', PATH: process.env.PATH ?? '' })).toMatchObject({ name: 'codex sandbox', status: 'ok' });
  });

  it('fails, saying what to do, when bwrap is missing or cannot make its namespaces', async () => {
    const missing = await checkCodexConfinement({ AGENT_RUNTIME: 'codex', PATH: join(dir, 'nothing') });
    expect(missing).toMatchObject({ status: 'fail', detail: 'no Codex child will be started: bubblewrap (bwrap) is not on PATH' });
    expect(missing.fix).toContain('apt-get install bubblewrap');
    expect(missing.fix).toContain('CODEX_SANDBOX=off');
    const refused = await checkCodexConfinement({ AGENT_RUNTIME: 'codex', PATH: dir });
    expect(refused).toMatchObject({ status: 'fail', detail: `no Codex child will be started: ${join(dir, 'bwrap')} cannot create its sandbox here (bwrap: setting up uid map: Permission denied)` });
    expect(refused.fix).toContain('unprivileged user namespaces');
  });

  it('warns when an operator turned it off, and is skipped when Codex is not the runtime', async () => {
    expect(await checkCodexConfinement({ AGENT_RUNTIME: 'codex', CODEX_SANDBOX: 'off', PATH: '' })).toMatchObject({ status: 'warn' });
    expect(await checkCodexConfinement({ PATH: '' })).toMatchObject({ status: 'skip' });
  });
});
