import { describe, expect, it } from 'vitest';
import { resolveAgentRuntime, resolvePermissionProfile } from './runtime-choice.ts';

describe('resolveAgentRuntime', () => {
  it('takes the conversation choice over the global default', () => {
    expect(resolveAgentRuntime('codex', 'openai')).toBe('codex');
    expect(resolveAgentRuntime(null, 'codex')).toBe('codex');
    expect(resolveAgentRuntime(undefined, 'openai')).toBe('openai');
  });
});

describe('resolvePermissionProfile', () => {
  it('defaults to read-only', () => {
    expect(resolvePermissionProfile(null, true)).toBe('read-only');
  });
  it('keeps workspace-write whatever the operator setting', () => {
    expect(resolvePermissionProfile('workspace-write', false)).toBe('workspace-write');
  });
  it('allows full-access only while the operator setting allows it', () => {
    expect(resolvePermissionProfile('full-access', true)).toBe('full-access');
    expect(resolvePermissionProfile('full-access', false)).toBe('read-only');
    expect(resolvePermissionProfile('full-access-unattended', true)).toBe('full-access-unattended');
    expect(resolvePermissionProfile('full-access-unattended', false)).toBe('read-only');
  });
});
