import { describe, expect, it } from 'vitest';
import { isInsideDirectory, resolveWorkspacePath } from './workspace-path.ts';

describe('resolveWorkspacePath', () => {
  it('puts each conversation in <root>/<id>', () => {
    expect(resolveWorkspacePath('/srv/codex', 42)).toEqual({ ok: true, path: '/srv/codex/42' });
    expect(resolveWorkspacePath('/srv/codex/', 7)).toEqual({ ok: true, path: '/srv/codex/7' });
    expect(resolveWorkspacePath('/srv/./x/../codex', 7)).toEqual({ ok: true, path: '/srv/codex/7' });
  });

  it('refuses a relative root and an id that is not a positive integer', () => {
    expect(resolveWorkspacePath('codex', 1)).toEqual({ ok: false, reason: 'root_not_absolute' });
    for (const id of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
      expect(resolveWorkspacePath('/srv/codex', id), String(id)).toEqual({ ok: false, reason: 'bad_conversation_id' });
    }
  });
});

describe('isInsideDirectory', () => {
  it('accepts paths strictly below the root', () => {
    expect(isInsideDirectory('/srv/codex', '/srv/codex/1')).toBe(true);
    expect(isInsideDirectory('/srv/codex', '/srv/codex/1/deep/er')).toBe(true);
    expect(isInsideDirectory('/srv/codex', '/srv/codex/..hidden')).toBe(true);
  });

  it('refuses the root itself, its parents, siblings sharing its prefix and .. escapes', () => {
    expect(isInsideDirectory('/srv/codex', '/srv/codex')).toBe(false);
    expect(isInsideDirectory('/srv/codex', '/srv/codex/')).toBe(false);
    expect(isInsideDirectory('/srv/codex', '/srv')).toBe(false);
    expect(isInsideDirectory('/srv/codex', '/srv/codex-other/1')).toBe(false);
    expect(isInsideDirectory('/srv/codex', '/srv/codex/1/../../etc')).toBe(false);
    expect(isInsideDirectory('/srv/codex', '/srv/codex/../codex2/1')).toBe(false);
    expect(isInsideDirectory('/srv/codex', '/etc/passwd')).toBe(false);
  });

  it('refuses relative paths, which would mean whatever the working directory is', () => {
    expect(isInsideDirectory('/srv/codex', 'codex/1')).toBe(false);
    expect(isInsideDirectory('srv/codex', '/srv/codex/1')).toBe(false);
  });
});
