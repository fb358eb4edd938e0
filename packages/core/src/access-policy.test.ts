import { describe, expect, it } from 'vitest';
import { decideAccess, type AccessPolicy } from './access-policy.ts';

const policy = (overrides: Partial<AccessPolicy> = {}): AccessPolicy => ({
  dmPolicy: 'open',
  groupPolicy: 'open',
  allowedUsers: { telegram: new Set(['42']) },
  allowedDiscordRoles: new Set(['role-ops']),
  ...overrides,
});

describe('decideAccess', () => {
  it('lets everyone in where the policy is open', () => {
    expect(decideAccess(policy(), { platform: 'telegram', userId: '7', isDirect: true })).toBe('allow');
  });

  it('applies the allowlist per kind of chat', () => {
    const dmsClosed = policy({ dmPolicy: 'allowlist' });
    expect(decideAccess(dmsClosed, { platform: 'telegram', userId: '7', isDirect: true })).toBe('not_allowed');
    expect(decideAccess(dmsClosed, { platform: 'telegram', userId: '42', isDirect: true })).toBe('allow');
    expect(decideAccess(dmsClosed, { platform: 'telegram', userId: '7', isDirect: false })).toBe('allow');
  });

  it('admits Discord members by role, and never mixes platforms up', () => {
    const closed = policy({ groupPolicy: 'allowlist' });
    expect(decideAccess(closed, { platform: 'discord', userId: '9', isDirect: false, roles: ['role-ops'] })).toBe('allow');
    expect(decideAccess(closed, { platform: 'discord', userId: '9', isDirect: false, roles: ['other'] })).toBe('not_allowed');
    expect(decideAccess(closed, { platform: 'slack', userId: '42', isDirect: false })).toBe('not_allowed');
  });
});
