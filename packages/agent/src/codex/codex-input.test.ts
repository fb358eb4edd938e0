import { describe, expect, it } from 'vitest';
import { apiOnlyNotes, permissionProfiles } from '@switchboard/core';
import { approvalPolicyOf, buildTurnText, developerInstructionsOf, sandboxPolicyOf, threadSettingsOf } from './codex-input.ts';
import { codeOfCodexError, endOfCompletedTurn } from './codex-turn-end.ts';

describe('developerInstructionsOf', () => {
  it('is the instructions, then each note as a paragraph of its own (issue 29, defect 7)', () => {
    expect(developerInstructionsOf({ instructions: 'Be brief.', notes: [apiOnlyNotes.recovery, apiOnlyNotes.resume] })).toBe(
      `Be brief.\n\n${apiOnlyNotes.recovery}\n\n${apiOnlyNotes.resume}`,
    );
  });

  it('is the notes alone without instructions, and nothing when there is neither', () => {
    expect(developerInstructionsOf({ instructions: '  ', notes: [apiOnlyNotes.resume] })).toBe(apiOnlyNotes.resume);
    expect(developerInstructionsOf({ instructions: '', notes: [] })).toBeUndefined();
  });

  it('each note says it is from the gateway, not from the user', () => {
    for (const note of Object.values(apiOnlyNotes)) expect(note).toMatch(/^Note from the chat gateway \(not from the user\)/);
  });
});

describe('buildTurnText', () => {
  it('is the user messages alone on a thread that has its context', () => {
    expect(buildTurnText({ history: [], input: ['first', 'second'] })).toBe('first\n\nsecond');
  });

  it('carries history, then the input, and never a note', () => {
    const text = buildTurnText({
      history: [
        { role: 'user', kind: 'summary', content: 'S' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'calculator', arguments: '{"x":1}' }] },
        { role: 'tool', content: '2', toolCallId: 'c', toolName: 'calculator' },
        { role: 'assistant', content: 'Two.' },
      ],
      input: ['go'],
    });
    expect(text).toBe(
      [
        '[Earlier conversation in this chat, for context:]',
        'Summary of what came before: S',
        'Assistant called calculator({"x":1})',
        'Tool calculator returned: 2',
        'Assistant: Two.',
        '[End of earlier conversation.]',
        '',
        'go',
      ].join('\n'),
    );
  });

  it('clips long tool output in the carried history', () => {
    const text = buildTurnText({ history: [{ role: 'tool', content: 'x'.repeat(5000), toolName: 'shell' }], input: ['go'] });
    expect(text.length).toBeLessThan(2200);
    expect(text).toContain('… [cut]');
  });
});

describe('profiles', () => {
  it('map to sandbox modes and policies', () => {
    expect(threadSettingsOf('read-only')).toEqual({ approvalPolicy: 'untrusted', sandbox: 'read-only' });
    expect(threadSettingsOf('workspace-write')).toEqual({ approvalPolicy: 'on-request', sandbox: 'workspace-write' });
    expect(threadSettingsOf('full-access')).toEqual({ approvalPolicy: 'untrusted', sandbox: 'danger-full-access' });
    expect(threadSettingsOf('full-access-unattended')).toEqual({ approvalPolicy: 'never', sandbox: 'danger-full-access' });
    expect(sandboxPolicyOf('read-only', '/w')).toEqual({ type: 'readOnly', networkAccess: false });
    expect(sandboxPolicyOf('workspace-write', '/w')).toMatchObject({ type: 'workspaceWrite', writableRoots: ['/w'] });
    expect(sandboxPolicyOf('full-access', '/w')).toEqual({ type: 'dangerFullAccess' });
    expect(sandboxPolicyOf('full-access-unattended', '/w')).toEqual({ type: 'dangerFullAccess' });
  });

  it('ask before every command but known-safe reads, except inside the workspace of workspace-write and where an operator chose unattended', () => {
    // Issue 30, finding 1: every profile was on-request, so read-only and full access asked for nothing the sandbox (or no sandbox) allowed.
    expect(permissionProfiles.map((profile) => [profile, approvalPolicyOf(profile)])).toEqual([
      ['read-only', 'untrusted'],
      ['workspace-write', 'on-request'],
      ['full-access', 'untrusted'],
      ['full-access-unattended', 'never'],
    ]);
  });
});

describe('endOfCompletedTurn', () => {
  it('reads the status, and an error seen before fails the turn', () => {
    expect(endOfCompletedTurn('completed', undefined, undefined)).toEqual({ kind: 'completed' });
    expect(endOfCompletedTurn('interrupted', undefined, { message: 'x', info: null })).toEqual({ kind: 'interrupted' });
    expect(endOfCompletedTurn('failed', 'quota', undefined)).toEqual({ kind: 'failed', code: 'MODEL_FAILED', message: 'quota' });
    expect(endOfCompletedTurn('completed', undefined, { message: 'upstream', info: null })).toMatchObject({ kind: 'failed', message: 'upstream' });
    expect(endOfCompletedTurn('weird', undefined, undefined)).toEqual({ kind: 'completed' });
  });

  it('a usage limit or an upstream 429 is a rate limit', () => {
    expect(codeOfCodexError('usageLimitExceeded')).toBe('MODEL_RATE_LIMITED');
    expect(codeOfCodexError({ responseStreamConnectionFailed: { httpStatusCode: 429 } })).toBe('MODEL_RATE_LIMITED');
    expect(codeOfCodexError({ httpConnectionFailed: { httpStatusCode: 500 } })).toBe('MODEL_FAILED');
  });
});
