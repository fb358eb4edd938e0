import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { busyInputModes } from './busy-mode.ts';
import { chatCommandNames, classifySignal, isCommandForAnotherBot, parseChatCommand, plainTextCommand, readStoredCommand, storedCommandOf, type ChatCommand } from './chat-commands.ts';

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

describe('the stored command (inbound_events.command)', () => {
  /** What the worker reads of a parse: the name, and /busy's mode. */
  const projected = (command: ChatCommand | null) => (command === null ? null : command.name === 'busy' ? { name: 'busy', mode: command.mode } : { name: command.name });
  const commandLike = fc.oneof(
    fc.string(),
    fc.tuple(fc.constantFrom('/', '!', ' /', '/'), fc.constantFrom(...chatCommandNames, 'BUSY', 'Stop', 'frobnicate', 'usr'), fc.constantFrom('', ' ', '  ', '\n'), fc.constantFrom('', ...busyInputModes, 'QUEUE', 'shout', 'queue now', 'a:b')).map((parts) => parts.join('')),
  );

  it('reads back, without the text, what ingress parsed: for any text the stored value alone gives the same command', () => {
    fc.assert(
      fc.property(commandLike, fc.string(), (text, otherText) => {
        const stored = storedCommandOf(parseChatCommand(text));
        // The row's text is not read: any other text gives the same answer.
        expect(readStoredCommand(stored, otherText)).toEqual(projected(parseChatCommand(text)));
      }),
    );
  });

  it('stores plain text as a value of its own, so NULL only ever means "never parsed"', () => {
    expect(storedCommandOf(parseChatCommand('hello /stop'))).toBe(plainTextCommand);
    expect(storedCommandOf(parseChatCommand('/busy Queue'))).toBe('busy:queue');
    expect(storedCommandOf(parseChatCommand('/busy shout'))).toBe('busy');
    expect(readStoredCommand(plainTextCommand, '/stop')).toBeNull();
    expect(readStoredCommand('stop', 'what the user wrote does not matter')).toEqual({ name: 'stop' });
  });

  it('parses the text of a row stored before the column existed (NULL), so an old /stop still stops', () => {
    expect(readStoredCommand(null, '/stop')).toEqual({ name: 'stop', args: '' });
    expect(readStoredCommand(null, '/busy steer')).toMatchObject({ name: 'busy', mode: 'steer' });
    expect(readStoredCommand(null, 'hello')).toBeNull();
  });

  it('falls back to the text for a value this release does not write (a newer gateway), never guessing from the value', () => {
    expect(readStoredCommand('pause', '/stop')).toMatchObject({ name: 'stop' });
    expect(readStoredCommand('busy:shout', 'hello')).toBeNull();
    expect(readStoredCommand('stop:now', 'hello')).toBeNull();
  });
});
