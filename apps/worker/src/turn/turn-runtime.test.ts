import { mkdtemp, mkdir, realpath, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWorkspace, turnTimeoutOf } from './turn-runtime.ts';

// A Codex conversation works in <CODEX_WORKSPACES>/<id>, never outside the
// root (docs/codex.md, "Workspaces"), on a real file system.
describe('ensureWorkspace', () => {
  let base: string;
  let root: string;
  let outside: string;

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'sb-workspaces-')));
    root = join(base, 'root');
    outside = join(base, 'outside');
    await mkdir(root);
    await mkdir(outside);
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('creates <root>/<id> on demand, private to the worker, and finds it again', async () => {
    expect(await ensureWorkspace(root, 7)).toEqual({ kind: 'ready', path: join(root, '7') });
    expect((await stat(join(root, '7'))).mode & 0o777).toBe(0o700);
    expect(await ensureWorkspace(root, 7)).toEqual({ kind: 'ready', path: join(root, '7') });
  });

  it('refuses a workspace that a symbolic link in the root sends outside it', async () => {
    await symlink(outside, join(root, '8'));
    expect(await ensureWorkspace(root, 8)).toEqual({ kind: 'workspace_refused', path: join(root, '8'), reason: 'outside_root' });
  });

  it('follows a root that is itself a link: the real workspace lies inside the real root', async () => {
    const linkedRoot = join(base, 'linked-root');
    await symlink(root, linkedRoot);
    expect(await ensureWorkspace(linkedRoot, 9)).toEqual({ kind: 'ready', path: join(root, '9') });
  });

  it('refuses a relative root and an id that names no conversation', async () => {
    expect(await ensureWorkspace('relative/root', 1)).toMatchObject({ kind: 'workspace_refused', reason: 'root_not_absolute' });
    expect(await ensureWorkspace(root, 0)).toMatchObject({ kind: 'workspace_refused', reason: 'bad_conversation_id' });
  });
});

describe('turnTimeoutOf', () => {
  const config = { AGENT_RUNTIME: 'openai' as const, TURN_TIMEOUT_MS: 300_000, CODEX_TURN_TIMEOUT_MS: 600_000 } as Parameters<typeof turnTimeoutOf>[0];

  it("gives a Codex turn CODEX_TURN_TIMEOUT_MS and any other TURN_TIMEOUT_MS, by the conversation's runtime or the global one", () => {
    expect(turnTimeoutOf(config, { runtime: null })).toBe(300_000);
    expect(turnTimeoutOf(config, { runtime: 'codex' })).toBe(600_000);
    expect(turnTimeoutOf({ ...config, AGENT_RUNTIME: 'codex' }, { runtime: null })).toBe(600_000);
    expect(turnTimeoutOf({ ...config, AGENT_RUNTIME: 'codex' }, { runtime: 'openai' })).toBe(300_000);
  });
});
