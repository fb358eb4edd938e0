import { describe, expect, it } from 'vitest';
import { findToolTail, type TranscriptMessageLike } from './tool-tail.ts';

const user = (content: string): TranscriptMessageLike => ({ role: 'user', content });
const call = (...ids: string[]): TranscriptMessageLike => ({ role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id })) });
const result = (id: string, content: string, name = 'wait'): TranscriptMessageLike => ({ role: 'tool', content, toolCallId: id, toolName: name });

describe('findToolTail', () => {
  it('finds trailing tool results after an assistant tool call', () => {
    const tail = findToolTail([user('hi'), call('a', 'b'), result('a', 'one'), result('b', 'two')]);
    expect(tail?.count).toBe(2);
    expect(tail?.key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is null when the model already answered, or there is no tool run', () => {
    expect(findToolTail([user('hi'), call('a'), result('a', 'x'), { role: 'assistant', content: 'done' }])).toBeNull();
    expect(findToolTail([user('hi'), call('a'), result('a', 'x'), { role: 'assistant', content: 'done' }, user('next')])).toBeNull();
    expect(findToolTail([user('hi'), user('next')])).toBeNull();
    expect(findToolTail([])).toBeNull();
  });

  it('still finds the tail behind user input of turns that never reached the model (the note stays owed)', () => {
    const bare = findToolTail([user('hi'), call('a'), result('a', 'x')]);
    const behind = findToolTail([user('hi'), call('a'), result('a', 'x'), user('next'), user('and again')]);
    expect(behind).toEqual({ start: 2, count: 1, key: bare?.key });
  });

  it('gives a new key when any call id, tool name or content differs', () => {
    const base = findToolTail([call('a'), result('a', 'x')])?.key;
    expect(findToolTail([call('a'), result('a', 'x')])?.key).toBe(base);
    expect(findToolTail([call('b'), result('b', 'x')])?.key).not.toBe(base);
    expect(findToolTail([call('a'), result('a', 'y')])?.key).not.toBe(base);
    expect(findToolTail([call('a'), result('a', 'x', 'calculator')])?.key).not.toBe(base);
  });
});
