import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { AgentError } from '../agent-error.ts';
import { createOpenAiConversation, readStreamedStep, toOpenAiMessage, toOpenAiTools } from './openai-messages.ts';

const call = { id: 'call_1', name: 'calculator', arguments: '{"expression":"1+1"}' };
const wireCall = { id: 'call_1', type: 'function', function: { name: 'calculator', arguments: '{"expression":"1+1"}' } };

describe('toOpenAiMessage', () => {
  it('maps each stored message as the model reads it', () => {
    expect(toOpenAiMessage({ role: 'user', content: 'hi' })).toEqual({ role: 'user', content: 'hi' });
    expect(toOpenAiMessage({ role: 'assistant', content: '' })).toEqual({ role: 'assistant', content: '' });
    expect(toOpenAiMessage({ role: 'assistant', content: '', toolCalls: [] })).toEqual({ role: 'assistant', content: '' });
    expect(toOpenAiMessage({ role: 'assistant', content: '', toolCalls: [call] })).toEqual({ role: 'assistant', content: null, tool_calls: [wireCall] });
    expect(toOpenAiMessage({ role: 'assistant', content: 'checking', toolCalls: [call] })).toEqual({ role: 'assistant', content: 'checking', tool_calls: [wireCall] });
    expect(toOpenAiMessage({ role: 'tool', content: '2', toolCallId: 'call_1', toolName: 'calculator' })).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '2' });
    expect(toOpenAiMessage({ role: 'tool', content: '2', toolCallId: null })).toEqual({ role: 'tool', tool_call_id: '', content: '2' });
    expect(toOpenAiMessage({ role: 'user', kind: 'summary', content: 'They met.' })).toEqual({
      role: 'system',
      content: 'Summary of the earlier conversation (written by the gateway):\nThey met.',
    });
  });

  it('keeps the wire field order the model has always received', () => {
    expect(JSON.stringify(toOpenAiMessage({ role: 'assistant', content: 'x', toolCalls: [call] }))).toBe(
      '{"role":"assistant","content":"x","tool_calls":[{"id":"call_1","type":"function","function":{"name":"calculator","arguments":"{\\"expression\\":\\"1+1\\"}"}}]}',
    );
    expect(JSON.stringify(toOpenAiMessage({ role: 'tool', content: '2', toolCallId: 'call_1' }))).toBe('{"role":"tool","tool_call_id":"call_1","content":"2"}');
  });
});

describe('createOpenAiConversation', () => {
  const conversation = () =>
    createOpenAiConversation({
      instructions: 'system prompt',
      history: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', content: '2', toolCallId: 'call_1' },
      ],
      notes: ['recovery note', 'resume note'],
      input: ['first', 'second'],
    });

  it('orders instructions, history, notes, input, then what the turn adds', () => {
    const c = conversation();
    expect(c.messages().map((m) => [m.role, m.content])).toEqual([
      ['system', 'system prompt'],
      ['user', 'q'],
      ['assistant', null],
      ['tool', '2'],
      ['system', 'recovery note'],
      ['system', 'resume note'],
      ['user', 'first'],
      ['user', 'second'],
    ]);
    c.add({ role: 'assistant', content: 'again', toolCalls: [{ ...call, id: 'call_2' }] });
    c.add({ role: 'tool', content: '2', toolCallId: 'call_2' });
    expect(c.messages().slice(-2)).toEqual([
      { role: 'assistant', content: 'again', tool_calls: [{ ...wireCall, id: 'call_2' }] },
      { role: 'tool', tool_call_id: 'call_2', content: '2' },
    ]);
  });

  it('sends an input with images as text and image_url parts, and the others as plain text', () => {
    const c = createOpenAiConversation({ instructions: 's', history: [], notes: [], input: ['look [image: photo.jpg]', 'and this'], inputImages: [[{ dataUrl: 'data:image/png;base64,AAEC' }]] });
    expect(c.messages().slice(1)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look [image: photo.jpg]' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAEC' } }] },
      { role: 'user', content: 'and this' },
    ]);
  });

  it('leaves the notes out once dropped, by position and not by text', () => {
    const c = createOpenAiConversation({ instructions: 'same', history: [], notes: ['same'], input: ['hi'] });
    c.dropNotes();
    expect(c.messages()).toEqual([
      { role: 'system', content: 'same' },
      { role: 'user', content: 'hi' },
    ]);
  });
});

describe('toOpenAiTools', () => {
  it('wraps each definition as a function tool', () => {
    expect(toOpenAiTools([{ name: 'wait', description: 'waits', parameters: { type: 'object' } }])).toEqual([
      { type: 'function', function: { name: 'wait', description: 'waits', parameters: { type: 'object' } } },
    ]);
  });
});

describe('readStreamedStep', () => {
  const chunk = (delta: ChatCompletionChunk.Choice.Delta): ChatCompletionChunk => ({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] });
  async function* stream(...chunks: ChatCompletionChunk[]) {
    yield* chunks;
  }

  it('joins the text and the tool calls streamed in pieces', async () => {
    const step = await readStreamedStep(
      stream(
        chunk({ content: 'Let ' }),
        chunk({ content: 'me', tool_calls: [{ index: 0, id: 'call_a', function: { name: 'calc', arguments: '{"ex' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { name: 'ulator', arguments: 'pression":"1"}' } }, { index: 1, function: { name: 'wait', arguments: '{}' } }] }),
      ),
    );
    expect(step).toEqual({
      content: 'Let me',
      toolCalls: [
        { id: 'call_a', name: 'calculator', arguments: '{"expression":"1"}' },
        { id: '', name: 'wait', arguments: '{}' },
      ],
    });
  });

  it('throws MODEL_REFUSED on a refusal', async () => {
    const error = await readStreamedStep(stream(chunk({ refusal: 'no' }))).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('MODEL_REFUSED');
  });
});
