import { describe, expect, it } from 'vitest';
import { classifySignal, isCommandForAnotherBot, parseChatCommand } from './chat-commands.ts';

describe('parseChatCommand', () => {
  it('reads slash commands with arguments', () => {
    expect(parseChatCommand('/busy queue')).toEqual({ name: 'busy', args: 'queue', mode: 'queue' });
    expect(parseChatCommand('/busy shout')).toEqual({ name: 'busy', args: 'shout', mode: null });
    expect(parseChatCommand('  /STATUS ')).toEqual({ name: 'status', args: '' });
  });

  it('accepts the Slack ! prefix only for known commands', () => {
    expect(parseChatCommand('!stop')).toEqual({ name: 'stop', args: '' });
    expect(parseChatCommand('!important news')).toBeNull();
  });

  it('honours /command@botname addressing in groups', () => {
    expect(parseChatCommand('/help@my_bot', 'my_bot')).toEqual({ name: 'help', args: '' });
    expect(parseChatCommand('/help@other_bot', 'my_bot')).toBeNull();
  });

  it('returns null for ordinary text, unknown /words included (they are text for the model)', () => {
    expect(parseChatCommand('hello /stop')).toBeNull();
    expect(parseChatCommand('/frobnicate now')).toBeNull();
    expect(parseChatCommand('/usr/bin is where it lives')).toBeNull();
    expect(classifySignal('/frobnicate now')).toBe('input');
    expect(classifySignal('/help')).toBe('none');
  });
});

describe('classifySignal', () => {
  it('tells the worker whether to stop, consider interrupting, or ignore', () => {
    expect(classifySignal('/stop')).toBe('stop');
    expect(classifySignal('what time is it?')).toBe('input');
    expect(classifySignal('/status')).toBe('none');
  });
});

describe('isCommandForAnotherBot', () => {
  it('knows a command addressed to another bot, case-insensitively, and nothing else', () => {
    expect(isCommandForAnotherBot('/stop@other_bot', 'my_bot')).toBe(true);
    expect(isCommandForAnotherBot('  /busy@Other_Bot queue', 'my_bot')).toBe(true);
    expect(isCommandForAnotherBot('/stop@My_Bot', 'my_bot')).toBe(false);
    expect(isCommandForAnotherBot('/stop', 'my_bot')).toBe(false);
    expect(isCommandForAnotherBot('mail me at a@other_bot', 'my_bot')).toBe(false);
    expect(isCommandForAnotherBot('!stop@other_bot', 'my_bot')).toBe(false);
  });

  it('cannot tell without our username, so it does not refuse then', () => {
    expect(isCommandForAnotherBot('/stop@other_bot', undefined)).toBe(false);
  });

  it('never lets a stop for another bot stop ours', () => {
    expect(classifySignal('/stop@other_bot', 'my_bot')).not.toBe('stop');
    expect(classifySignal('/stop@my_bot', 'my_bot')).toBe('stop');
  });
});
