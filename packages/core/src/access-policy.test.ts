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

describe('decideAccess under DM_POLICY=pairing', () => {
  const pairing = policy({ dmPolicy: 'pairing', groupPolicy: 'allowlist' });

  it('asks an unknown DM user to pair, and lets allowlisted, role-holding and paired users in', () => {
    expect(decideAccess(pairing, { platform: 'telegram', userId: '7', isDirect: true })).toBe('needs_pairing');
    expect(decideAccess(pairing, { platform: 'telegram', userId: '42', isDirect: true })).toBe('allow');
    expect(decideAccess(pairing, { platform: 'discord', userId: '9', isDirect: true, roles: ['role-ops'] })).toBe('allow');
    expect(decideAccess(pairing, { platform: 'slack', userId: 'U7', isDirect: true, paired: true })).toBe('allow');
  });

  it('never offers a code in a group: there the group policy refuses, and a paired user counts as allowlisted', () => {
    expect(decideAccess(pairing, { platform: 'telegram', userId: '7', isDirect: false })).toBe('not_allowed');
    expect(decideAccess(pairing, { platform: 'telegram', userId: '7', isDirect: false, paired: true })).toBe('allow');
    expect(decideAccess(policy({ dmPolicy: 'pairing' }), { platform: 'telegram', userId: '7', isDirect: false })).toBe('allow');
  });
});
