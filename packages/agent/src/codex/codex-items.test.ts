import { describe, expect, it } from 'vitest';
import { cancelledToolResult } from '../transcript-entry.ts';
import { projectCodexItem, projectUnfinishedItem } from './codex-items.ts';
import { createTurnItems } from './codex-turn-items.ts';

const command = (fields: Record<string, unknown>) => ({ type: 'commandExecution', id: 'c1', command: 'npm test', cwd: '/w', ...fields });
const fileChange = (fields: Record<string, unknown>) => ({ type: 'fileChange', id: 'f1', changes: [{ path: 'a.ts', kind: { type: 'update' }, diff: '+x' }], ...fields });

describe('projectCodexItem', () => {
  it('an agent message is an assistant entry; an empty one and other items are not kept', () => {
    expect(projectCodexItem({ type: 'agentMessage', id: 'm', text: 'Done.', phase: 'final' })).toEqual([{ role: 'assistant', content: 'Done.' }]);
    expect(projectCodexItem({ type: 'agentMessage', id: 'm', text: '' })).toEqual([]);
    expect(projectCodexItem({ type: 'reasoning', id: 'r', summary: ['thinking'] })).toEqual([]);
    expect(projectCodexItem({ type: 'userMessage', id: 'u', content: [] })).toEqual([]);
    expect(projectCodexItem({ type: 'somethingNew', id: 'n' })).toEqual([]);
  });

  it('a command execution is a shell call with its output and exit code', () => {
    expect(projectCodexItem(command({ status: 'completed', aggregatedOutput: 'ok\n', exitCode: 0 }))).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'shell', arguments: '{"command":"npm test","cwd":"/w"}' }] },
      { role: 'tool', toolCallId: 'c1', toolName: 'shell', content: 'exit code 0\nok\n' },
    ]);
    expect(projectCodexItem(command({ status: 'failed', aggregatedOutput: 'boom', exitCode: 2 }))[1]).toMatchObject({ content: 'failed, exit code 2\nboom' });
    expect(projectCodexItem(command({ status: 'declined' }))[1]).toMatchObject({ content: 'declined: the command was not approved and did not run' });
  });

  it('an argv command (older servers) is one line; odd field types do not break it', () => {
    const [call] = projectCodexItem(command({ command: ['bash', '-lc', 'ls'], exitCode: 'zero', status: 'completed' }));
    expect(call).toMatchObject({ toolCalls: [{ arguments: '{"command":"bash -lc ls","cwd":"/w"}' }] });
  });

  it('a file change is an apply_patch call with the changes, applied or declined', () => {
    const [call, result] = projectCodexItem(fileChange({ status: 'completed' }));
    expect(call).toMatchObject({ toolCalls: [{ id: 'f1', name: 'apply_patch' }] });
    expect(JSON.parse(call?.role === 'assistant' ? (call.toolCalls?.[0]?.arguments ?? '') : '')).toEqual({
      changes: [{ path: 'a.ts', kind: { type: 'update' }, diff: '+x' }],
    });
    expect(result).toEqual({ role: 'tool', toolCallId: 'f1', toolName: 'apply_patch', content: 'applied: a.ts' });
    expect(projectCodexItem(fileChange({ status: 'declined' }))[1]).toMatchObject({ content: 'declined: the change was not approved and not applied (a.ts)' });
  });

  it('an unfinished tool item gets the cancelled result; an unfinished message is dropped', () => {
    expect(projectUnfinishedItem(command({ status: 'inProgress' }))[1]).toEqual({ role: 'tool', toolCallId: 'c1', toolName: 'shell', content: cancelledToolResult });
    expect(projectUnfinishedItem({ type: 'agentMessage', id: 'm', text: 'half' })).toEqual([]);
  });
});

describe('createTurnItems', () => {
  it('keeps completion order, finishes unfinished calls last, and takes the last message as the text', () => {
    const items = createTurnItems();
    items.started(command({ status: 'inProgress' }));
    items.started({ type: 'agentMessage', id: 'm1', text: '' });
    items.completed({ type: 'agentMessage', id: 'm1', text: 'Running tests.' });
    items.completed({ type: 'agentMessage', id: 'm1', text: 'Running tests.' }); // a repeat is not a second entry
    items.started({ type: 'agentMessage', id: 'm2', text: '' });

    expect(items.entries().map((entry) => entry.role)).toEqual(['assistant', 'assistant', 'tool']);
    expect(items.entries()[2]).toMatchObject({ content: cancelledToolResult });
    expect(items.toolIterations).toBe(1);
    expect(items.finalText).toBe('Running tests.');
    expect(items.find('c1')).toMatchObject({ command: 'npm test' });
  });
});
