import { describe, expect, it } from 'vitest';
import { gatewayEnvSchema, parseConfig } from '@switchboard/config';
import { checkAccess } from '../../scripts/lib/doctor-checks.ts';

// Issue 30, finding 6: GROUP_POLICY follows DM_POLICY's strictness unless set, and the doctor warns when it is set open beside a closed DM policy.
describe('who may talk to the bot in groups', () => {
  const groupPolicy = (env: Record<string, string>) => parseConfig(gatewayEnvSchema, env).GROUP_POLICY;

  it('unset, follows DM_POLICY: open only when direct messages are open', () => {
    expect(groupPolicy({})).toBe('open');
    expect(groupPolicy({ DM_POLICY: 'open' })).toBe('open');
    expect(groupPolicy({ DM_POLICY: 'allowlist' })).toBe('allowlist');
    expect(groupPolicy({ DM_POLICY: 'pairing' })).toBe('allowlist');
  });

  it('set, is what the operator says', () => {
    expect(groupPolicy({ DM_POLICY: 'pairing', GROUP_POLICY: 'open' })).toBe('open');
    expect(groupPolicy({ DM_POLICY: 'open', GROUP_POLICY: 'allowlist' })).toBe('allowlist');
  });

  it('the doctor warns about open groups beside a closed DM policy, and only then', () => {
    expect(checkAccess({ DM_POLICY: 'pairing', GROUP_POLICY: 'open' })).toMatchObject({ status: 'warn', detail: expect.stringMatching(/strangers included/) });
    expect(checkAccess({ DM_POLICY: 'allowlist', GROUP_POLICY: 'open' }).status).toBe('warn');
    expect(checkAccess({ DM_POLICY: 'pairing' })).toMatchObject({ status: 'ok', detail: 'DM_POLICY=pairing, GROUP_POLICY=allowlist (following DM_POLICY)' });
    expect(checkAccess({}).status).toBe('ok');
    expect(checkAccess({ GROUP_POLICY: 'open' }).status).toBe('ok');
  });
});
