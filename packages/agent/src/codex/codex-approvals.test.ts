import { describe, expect, it } from 'vitest';
import type { ApprovalAnswer } from '../agent-runtime.ts';
import { approvalKindOf, describeApproval, interruptsTurn, toWireDecision } from './codex-approvals.ts';

const answers: ApprovalAnswer['decision'][] = ['approved', 'approved_for_session', 'denied', 'unanswered', 'cancelled'];

describe('toWireDecision', () => {
  it('maps answers to the current vocabulary, failing closed', () => {
    expect(answers.map((decision) => toWireDecision('command', { decision }))).toEqual(['accept', 'acceptForSession', 'decline', 'decline', 'cancel']);
    expect(answers.map((decision) => toWireDecision('file_change', { decision }))).toEqual(['accept', 'acceptForSession', 'decline', 'decline', 'cancel']);
  });

  it('maps answers to the older vocabulary; a cancel is denied and interrupts the turn', () => {
    expect(answers.map((decision) => toWireDecision('legacy_command', { decision }))).toEqual(['approved', 'approved_for_session', 'denied', 'denied', 'denied']);
    expect(interruptsTurn('legacy_file_change', { decision: 'cancelled' })).toBe(true);
    expect(interruptsTurn('command', { decision: 'cancelled' })).toBe(false);
    expect(interruptsTurn('legacy_command', { decision: 'denied' })).toBe(false);
  });
});

describe('approvalKindOf', () => {
  it('knows the four approval requests and nothing else', () => {
    expect(approvalKindOf('item/commandExecution/requestApproval')).toBe('command');
    expect(approvalKindOf('item/fileChange/requestApproval')).toBe('file_change');
    expect(approvalKindOf('execCommandApproval')).toBe('legacy_command');
    expect(approvalKindOf('applyPatchApproval')).toBe('legacy_file_change');
    expect(approvalKindOf('item/tool/requestUserInput')).toBeNull();
    expect(approvalKindOf('toString')).toBeNull();
  });
});

describe('describeApproval', () => {
  it('a command from the request, else from the item it is about', () => {
    expect(describeApproval('command', { command: 'rm -rf build', cwd: '/w', reason: 'clean up', startedAtMs: 1 }, undefined)).toEqual({
      kind: 'command',
      summary: 'run `rm -rf build`',
      detail: '$ rm -rf build\nin /w\nreason: clean up',
    });
    const item = { type: 'commandExecution', id: 'c', command: 'ls', cwd: '/x' };
    expect(describeApproval('command', { itemId: 'c' }, item)).toMatchObject({ summary: 'run `ls`', detail: '$ ls\nin /x' });
    expect(describeApproval('legacy_command', { command: ['git', 'push'], cwd: '/w' }, undefined)).toMatchObject({ summary: 'run `git push`' });
    expect(describeApproval('command', { command: 42 }, undefined)).toEqual({ kind: 'command', summary: 'run a command' });
  });

  it('file changes name their paths and a session-wide write grant', () => {
    const item = { type: 'fileChange', id: 'f', changes: [{ path: 'a.ts' }, { path: 'b.ts' }] };
    expect(describeApproval('file_change', { itemId: 'f', grantRoot: '/w/src' }, item)).toEqual({
      kind: 'file_change',
      summary: 'change 2 files',
      detail: 'a.ts\nb.ts\nand allow writes under /w/src for the rest of the session',
    });
    expect(describeApproval('legacy_file_change', { fileChanges: { 'README.md': { type: 'add' } } }, undefined)).toMatchObject({ summary: 'change README.md' });
  });
});
