import { describe, expect, it } from 'vitest';
import { PlatformError } from '../errors.ts';
import { parseDiscordInteraction } from './parse-interaction.ts';

const base = { id: '800000000000000001', application_id: '900000000000000001', token: 'tok-abc', version: 1 };
const user = { id: '300000000000000042', username: 'ada' };

describe('parseDiscordInteraction', () => {
  it('recognises PING', () => {
    expect(parseDiscordInteraction({ ...base, type: 1 })).toEqual({ kind: 'ping' });
  });

  it('turns a slash command into the text of a typed command, in the channel conversation', () => {
    const command = { ...base, type: 2, channel_id: '400000000000000007', user, data: { id: '1', name: 'busy', type: 1, options: [{ name: 'mode', type: 3, value: 'queue' }] } };
    expect(parseDiscordInteraction(command)).toEqual({
      kind: 'command',
      name: 'busy',
      message: {
        platform: 'discord',
        eventId: '800000000000000001',
        userId: user.id,
        text: '/busy queue',
        address: { platform: 'discord', accountId: '900000000000000001', chatId: '400000000000000007', threadId: '', userScope: '' },
        replyTarget: { channelId: '400000000000000007', interactionToken: 'tok-abc', applicationId: '900000000000000001' },
      },
    });
  });

  it('reads /schedules’ subcommands as the typed command, and a Cancel button as the typed cancel from the presser', () => {
    const cancel = { name: 'cancel', type: 1, options: [{ name: 'id', type: 4, value: 12 }] };
    const slash = { ...base, type: 2, channel_id: '400000000000000007', user, data: { id: '1', name: 'schedules', type: 1, options: [cancel] } };
    expect(parseDiscordInteraction(slash)).toMatchObject({ kind: 'command', name: 'schedules', message: { text: '/schedules cancel 12' } });
    const press = { ...base, type: 3, guild_id: '500000000000000001', channel_id: '400000000000000007', member: { user, roles: [] }, data: { custom_id: 'sch:cancel:12', component_type: 2 } };
    expect(parseDiscordInteraction(press)).toMatchObject({
      kind: 'command',
      name: 'schedules',
      message: { text: '/schedules cancel 12', address: { chatId: '400000000000000007', userScope: user.id }, replyTarget: { interactionToken: 'tok-abc' } },
    });
  });

  it('scopes guild commands per member and takes the channel from channel.id too', () => {
    const result = parseDiscordInteraction(
      { ...base, type: 2, guild_id: '600000000000000001', channel: { id: '400000000000000008', type: 0 }, member: { user, roles: ['700000000000000001'] }, data: { name: 'help' } },
      { applicationId: '111' },
    );
    expect(result.kind === 'command' && result.message.text).toBe('/help');
    expect(result.kind === 'command' && result.message.address).toMatchObject({ accountId: '111', chatId: '400000000000000008', userScope: user.id });
    expect(result.kind === 'command' && result.message.roles).toEqual(['700000000000000001']);
  });

  it('gives each member of a group DM their own conversation, not the DM policy\'s (issue 30, finding 8)', () => {
    const inGroup = (extra: Record<string, unknown>) => parseDiscordInteraction({ ...base, type: 2, channel_id: '400000000000000009', user, data: { name: 'status' }, ...extra });
    const scopeOf = (result: ReturnType<typeof parseDiscordInteraction>) => (result.kind === 'command' ? result.message.address.userScope : 'not a command');
    expect(scopeOf(inGroup({ context: 2, channel: { id: '400000000000000009', type: 3 } }))).toBe(user.id);
    expect(scopeOf(inGroup({ channel: { id: '400000000000000009', type: 3 } }))).toBe(user.id);
    expect(scopeOf(inGroup({ context: 2 }))).toBe(user.id);
    expect(scopeOf(inGroup({ context: 1, channel: { id: '400000000000000009', type: 1 } }))).toBe('');
    expect(scopeOf(inGroup({}))).toBe('');
  });

  it('leaves other interaction types unsupported and rejects malformed bodies', () => {
    expect(parseDiscordInteraction({ ...base, type: 4, user, channel_id: '1' })).toEqual({ kind: 'unsupported', reason: 'interaction_type_4' });
    for (const body of [null, {}, { ...base, type: 'x' }, { ...base, type: 2, user }, { ...base, type: 2, channel_id: '1', data: { name: 'new' } }]) {
      expect(() => parseDiscordInteraction(body)).toThrow(PlatformError);
    }
  });
});
