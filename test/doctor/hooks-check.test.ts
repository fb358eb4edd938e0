import { describe, expect, it } from 'vitest';
import { checkHooks } from '../../scripts/lib/doctor-checks.ts';
import { writeHooksFile } from '../support/hooks.ts';

// Issue 34, triggered turns: the doctor reads HOOKS_FILE as the gateway does at start, naming hooks, never a secret.
describe('the doctor’s hooks line', () => {
  it('is skipped without HOOKS_FILE, lists the hooks of a good file and fails on a bad one without its secret', () => {
    expect(checkHooks({}).status).toBe('skip');
    const good = writeHooksFile({ ci: { secret: 'a-long-enough-secret', conversationId: 3, prompt: '{{body}}' } });
    expect(checkHooks({ HOOKS_FILE: good })).toMatchObject({ status: 'ok', detail: `1 hook in ${good}: ci` });
    const bad = writeHooksFile({ ci: { secret: 'short', conversationId: 3, prompt: '{{body}}' }, deploy: { secret: 'a-long-enough-secret', prompt: 'p' } });
    const result = checkHooks({ HOOKS_FILE: bad });
    expect(result).toMatchObject({ status: 'fail', detail: 'HOOKS_FILE hook "ci": secret must be at least 16 characters; HOOKS_FILE hook "deploy": conversationId is required' });
    expect(JSON.stringify(result)).not.toContain('short');
  });
});
