import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { busyInputModes } from './busy-mode.ts';
import {
  chatCommandNames,
  classifySignal,
  isCommandForAnotherBot,
  parseChatCommand,
  parseScheduleCancelPayload,
  plainTextCommand,
  readStoredCommand,
  scheduleCancelPayload,
  scheduleCancelText,
  storedCommandOf,
  type ChatCommand,
} from './chat-commands.ts';

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
  const projected = (command: ChatCommand | null) => {
    if (command === null) return null;
    if (command.name === 'busy') return { name: 'busy', mode: command.mode };
    return command.name === 'schedules' ? { name: 'schedules', action: command.action } : { name: command.name };
  };
  const argumentLike = ['', ...busyInputModes, 'QUEUE', 'shout', 'queue now', 'a:b', 'cancel 12', 'CANCEL #7', 'cancel 0', 'cancel 12 13', 'cancel x', 'cancel 99999999999999999'];
  const commandLike = fc.oneof(
    fc.string(),
    fc.tuple(fc.constantFrom('/', '!', ' /', '/'), fc.constantFrom(...chatCommandNames, 'BUSY', 'Stop', 'Schedules', 'frobnicate', 'usr'), fc.constantFrom('', ' ', '  ', '\n'), fc.constantFrom(...argumentLike)).map((parts) => parts.join('')),
    fc.tuple(fc.constantFrom('/schedules cancel ', '!schedules cancel #'), fc.string()).map((parts) => parts.join('')),
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
    expect(readStoredCommand('schedules:cancel:abc', 'hello')).toBeNull();
    expect(readStoredCommand('schedules:cancel:0', 'hello')).toBeNull();
    expect(readStoredCommand('schedules:pause:3', 'hello')).toBeNull();
  });

  it('still reads every value stored before /schedules existed', () => {
    expect(readStoredCommand('busy:queue', '')).toEqual({ name: 'busy', mode: 'queue' });
    expect(readStoredCommand('busy', '')).toEqual({ name: 'busy', mode: null });
    for (const name of ['new', 'reset', 'stop', 'status', 'compact', 'help', 'approve', 'deny']) expect(readStoredCommand(name, '')).toEqual({ name });
  });
});

describe('/schedules', () => {
  it('lists with no arguments and cancels one schedule by id, with or without #', () => {
    expect(parseChatCommand('/schedules')).toEqual({ name: 'schedules', args: '', action: { kind: 'list' } });
    expect(parseChatCommand('/schedules list')).toMatchObject({ name: 'schedules', action: { kind: 'list' } });
    expect(parseChatCommand('!schedules cancel 12')).toMatchObject({ name: 'schedules', action: { kind: 'cancel', id: 12 } });
    expect(parseChatCommand('/schedules@my_bot CANCEL #7', 'my_bot')).toMatchObject({ action: { kind: 'cancel', id: 7 } });
  });

  it('reads arguments it cannot use as a request for the usage line, never as a cancel', () => {
    for (const args of ['cancel', 'cancel 0', 'cancel x', 'cancel 1 2', 'cancel -3', 'cancel 1e3', 'cancel 1234567890123456', 'delete 4', 'all'])
      expect(parseChatCommand(`/schedules ${args}`)).toMatchObject({ name: 'schedules', action: { kind: 'usage' } });
  });

  it('stores the id with the command, so the worker never reads the text again', () => {
    expect(storedCommandOf(parseChatCommand('/schedules'))).toBe('schedules');
    expect(storedCommandOf(parseChatCommand('/schedules cancel 42'))).toBe('schedules:cancel:42');
    expect(storedCommandOf(parseChatCommand('/schedules cancel'))).toBe('schedules:usage');
    expect(readStoredCommand('schedules:cancel:42', 'anything')).toEqual({ name: 'schedules', action: { kind: 'cancel', id: 42 } });
    expect(readStoredCommand('schedules', 'anything')).toEqual({ name: 'schedules', action: { kind: 'list' } });
  });

  it('gives a Cancel button the text that cancels that schedule', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999_999_999_999_999 }), (id) => {
        expect(parseChatCommand(scheduleCancelText(id))).toMatchObject({ name: 'schedules', action: { kind: 'cancel', id } });
      }),
    );
  });

  it('gives a Cancel button a payload that names its schedule and fits Telegram’s 64 bytes; nothing else reads as one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999_999_999_999_999 }), (id) => {
        expect(parseScheduleCancelPayload(scheduleCancelPayload(id))).toBe(id);
        expect(Buffer.byteLength(scheduleCancelPayload(id))).toBeLessThanOrEqual(64);
      }),
    );
    for (const payload of ['apv:tok:a', 'sch:cancel:', 'sch:cancel:0', 'sch:cancel:1:2', 'sch:cancel:x', 'sch:list:3']) expect(parseScheduleCancelPayload(payload)).toBeNull();
  });

  it('is not a signal: it neither stops nor interrupts a running turn', () => {
    expect(classifySignal('/schedules')).toBe('none');
    expect(classifySignal('/schedules cancel 3')).toBe('none');
  });
});
