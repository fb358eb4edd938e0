import { mkdtemp, mkdir, readFile, realpath, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodexChildEnv, ensureCodexHome, findOperatorCodexHome } from './codex-home.ts';

// Each Codex conversation's own HOME, CODEX_HOME and TMPDIR under CODEX_HOMES (docs/codex.md, "What a
// child gets"), seeded from the operator's Codex home, on a real file system.
describe('ensureCodexHome', () => {
  let base: string;
  let root: string;
  let operatorHome: string;

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'sb-codex-homes-')));
    root = join(base, 'homes');
    operatorHome = join(base, 'operator', '.codex');
    await mkdir(root);
    await mkdir(operatorHome, { recursive: true });
    await writeFile(join(operatorHome, 'config.toml'), 'model = "gpt-5"\n');
    await writeFile(join(operatorHome, 'auth.json'), '{"tokens":"operator"}');
    // Codex's transcripts in the operator's home are never copied to a conversation.
    await mkdir(join(operatorHome, 'sessions'));
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('creates <root>/<id> with .codex and tmp, each 0700, with the operator’s config and login copied in (0600), nothing else', async () => {
    const dirs = await ensureCodexHome({ root, conversationId: 7, operatorHome });
    const home = join(root, '7');
    expect(dirs).toEqual({ kind: 'ready', home, codexHome: join(home, '.codex'), tmpDir: join(home, 'tmp') });
    for (const dir of [home, join(home, '.codex'), join(home, 'tmp')]) expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await readFile(join(home, '.codex', 'config.toml'), 'utf8')).toBe('model = "gpt-5"\n');
    expect((await stat(join(home, '.codex', 'auth.json'))).mode & 0o777).toBe(0o600);
    await expect(stat(join(home, '.codex', 'sessions'))).rejects.toThrow();
  });

  it('keeps a conversation’s newer copy (a login its child renewed), and takes the operator’s when that is newer', async () => {
    const copy = join(root, '7', '.codex', 'auth.json');
    await writeFile(copy, '{"tokens":"renewed"}');
    await ensureCodexHome({ root, conversationId: 7, operatorHome });
    expect(await readFile(copy, 'utf8')).toBe('{"tokens":"renewed"}');
    const later = new Date(Date.now() + 60_000);
    await writeFile(join(operatorHome, 'auth.json'), '{"tokens":"operator again"}');
    await utimes(join(operatorHome, 'auth.json'), later, later);
    await ensureCodexHome({ root, conversationId: 7, operatorHome });
    expect(await readFile(copy, 'utf8')).toBe('{"tokens":"operator again"}');
  });

  it('refuses a home that a symbolic link in the root sends outside it', async () => {
    await mkdir(join(base, 'elsewhere'));
    await symlink(join(base, 'elsewhere'), join(root, '8'));
    expect(await ensureCodexHome({ root, conversationId: 8, operatorHome })).toEqual({ kind: 'failed', reason: 'CODEX_HOMES: outside_root' });
  });

  it('works with no operator Codex home at all', async () => {
    expect(await ensureCodexHome({ root, conversationId: 9, operatorHome: join(base, 'missing') })).toMatchObject({ kind: 'ready' });
  });
});

describe('createCodexChildEnv', () => {
  it('builds the child’s environment from the allow-list, with the conversation’s directories and the provider key', async () => {
    const base = await realpath(await mkdtemp(join(tmpdir(), 'sb-codex-env-')));
    try {
      const source = { PATH: '/bin', HOME: join(base, 'operator'), DATABASE_URL: 'postgres://u:p@h/d', OPENAI_API_KEY: 'sk-1' };
      const outcome = await createCodexChildEnv({ homesRoot: base, passthrough: [], source })(3);
      const home = join(base, '3');
      expect(outcome).toEqual({ kind: 'ready', env: { PATH: '/bin', OPENAI_API_KEY: 'sk-1', HOME: home, CODEX_HOME: join(home, '.codex'), TMPDIR: join(home, 'tmp') } });
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it('finds the operator’s Codex home in CODEX_HOME, else ~/.codex', () => {
    expect(findOperatorCodexHome({ CODEX_HOME: '/etc/codex', HOME: '/home/op' })).toBe('/etc/codex');
    expect(findOperatorCodexHome({ HOME: '/home/op' })).toBe('/home/op/.codex');
  });
});
