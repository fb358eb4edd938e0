import { describe, expect, it } from 'vitest';
import { conversationUid, uidRange, userArgv } from './codex-sandbox-user.ts';

describe('the uid a root worker’s Codex child runs as', () => {
  it('is one per conversation, above the base, never root’s', () => {
    expect(conversationUid(2_000_000_000, 7)).toBe(2_000_000_007);
    expect(conversationUid(2_000_000_000, 8)).not.toBe(conversationUid(2_000_000_000, 7));
    // Ids past the range share a uid with a lower one: still never below the base.
    expect(conversationUid(2_000_000_000, uidRange + 7)).toBe(2_000_000_007);
  });

  it('is set by setpriv for uid and gid, with no supplementary groups (root’s would stay otherwise)', () => {
    expect(userArgv('/usr/bin/setpriv', 2_000_000_007, ['/usr/bin/bwrap', '--', 'codex'])).toEqual(['/usr/bin/setpriv', '--reuid=2000000007', '--regid=2000000007', '--clear-groups', '--', '/usr/bin/bwrap', '--', 'codex']);
  });
});
