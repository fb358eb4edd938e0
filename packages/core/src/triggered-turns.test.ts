import { describe, expect, it } from 'vitest';
import { approvalAskedOf, hookEventId, hookUserId, isHookUserId, renderHookPrompt } from './triggered-turns.ts';

describe('triggered turns', () => {
  describe(renderHookPrompt.name, () => {
    it('puts the body in place of every {{body}}, once, and cleans it as user text', () => {
      expect(renderHookPrompt('Build failed: {{body}} ({{body}})', 'x')).toBe('Build failed: x (x)');
      expect(renderHookPrompt('Got {{body}}', '{{body}}')).toBe('Got {{body}}');
      expect(renderHookPrompt('Got {{body}}', 'a\u0000b\ud800')).toBe('Got ab\ufffd');
      expect(renderHookPrompt('No body here', '{"a":1}')).toBe('No body here');
    });
  });

  describe(approvalAskedOf.name, () => {
    it('names nobody for a hook user, so only APPROVERS may answer', () => {
      expect(approvalAskedOf('telegram:1:hook:deploy', hookUserId('deploy'))).toBeNull();
      expect(approvalAskedOf('telegram:1:42', '42')).toBe('telegram:1:42');
    });
  });

  it('keeps hook users and event ids in their own namespace', () => {
    expect(isHookUserId(hookUserId('ci'))).toBe(true);
    expect(isHookUserId('U123')).toBe(false);
    expect(hookEventId('ci', 'abc')).toBe('hook:ci:abc');
  });
});
