import { describe, expect, it } from 'vitest';
import { PlatformError } from './errors.ts';
import { parseDiscordInteraction } from './discord/parse-interaction.ts';
import { parseSlackInteraction } from './slack/parse-interaction.ts';
import { parseTelegramUpdate } from './telegram/parse-update.ts';

// Button presses (approval answers) on each platform: a press names who pressed and what the button carries, never a message.
describe('Telegram callback_query', () => {
  const context = { botId: '123456', botUsername: 'sb_bot' };
  const update = (callback: Record<string, unknown>) => ({ update_id: 5, callback_query: callback });

  it('becomes a button press with the callback query id to answer', () => {
    const result = parseTelegramUpdate(
      update({ id: 'cb-1', from: { id: 42, is_bot: false, first_name: 'A' }, chat_instance: 'x', data: 'apv:tok12345678:a', message: { message_id: 7, date: 1, chat: { id: 42, type: 'private' } } }),
      context,
    );
    expect(result).toEqual({ kind: 'button', press: { platform: 'telegram', accountId: '123456', userId: '42', payload: 'apv:tok12345678:a', answer: { callbackQueryId: 'cb-1' } } });
  });

  it('turns a Cancel button under a /schedules list into that command, from the presser, in the chat and topic it was pressed in', () => {
    const pressed = (chat: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      parseTelegramUpdate(update({ id: 'cb-9', from: { id: 42, is_bot: false, first_name: 'A' }, chat_instance: 'x', data: 'sch:cancel:17', message: { message_id: 7, date: 1, chat, ...extra } }), context);
    expect(pressed({ id: 42, type: 'private' })).toEqual({
      kind: 'message',
      message: {
        platform: 'telegram', eventId: '5', userId: '42', text: '/schedules cancel 17',
        address: { platform: 'telegram', accountId: '123456', chatId: '42', threadId: '', userScope: '' },
        replyTarget: { chatId: 42 }, pressAnswer: { callbackQueryId: 'cb-9' },
      },
    });
    // In a group topic: the presser's own conversation there, whoever's list it was.
    expect(pressed({ id: -100, type: 'supergroup' }, { message_thread_id: 3, is_topic_message: true })).toMatchObject({
      kind: 'message',
      message: { address: { chatId: '-100', threadId: '3', userScope: '42' }, replyTarget: { chatId: -100, messageThreadId: 3, replyToMessageId: 7 } },
    });
    // A forged or broken payload is no command: it goes the approval way, which refuses what it does not know.
    expect(parseTelegramUpdate(update({ id: 'cb-8', from: { id: 42 }, chat_instance: 'x', data: 'sch:cancel:0' }), context)).toMatchObject({ kind: 'button' });
    expect(parseTelegramUpdate(update({ id: 'cb-7', from: { id: 42 }, chat_instance: 'x', data: 'sch:cancel:5' }), context)).toEqual({ kind: 'ignored', reason: 'press_without_message' });
  });

  it('ignores a game callback (no data) and refuses a callback without a presser', () => {
    expect(parseTelegramUpdate(update({ id: 'cb-2', from: { id: 42 }, chat_instance: 'x', game_short_name: 'g' }), context)).toEqual({ kind: 'ignored', reason: 'callback_without_data' });
    expect(() => parseTelegramUpdate(update({ id: 'cb-3', data: 'x' }), context)).toThrow(PlatformError);
  });
});

describe('Slack block_actions', () => {
  const payload = (over: Record<string, unknown> = {}) =>
    JSON.stringify({
      type: 'block_actions',
      user: { id: 'U1', username: 'u', team_id: 'T1' },
      team: { id: 'T1', domain: 'd' },
      response_url: 'https://hooks.example.test/actions/1',
      actions: [{ type: 'button', action_id: 'apv:tok12345678:d', block_id: 'b', value: 'apv:tok12345678:d', action_ts: '1.2' }],
      ...over,
    });

  it('becomes a button press with the response_url to answer', () => {
    expect(parseSlackInteraction(payload())).toEqual({
      kind: 'button',
      press: { platform: 'slack', accountId: 'T1', userId: 'U1', payload: 'apv:tok12345678:d', answer: { responseUrl: 'https://hooks.example.test/actions/1' } },
    });
  });

  it('ignores other interactions and refuses what is not a payload', () => {
    expect(parseSlackInteraction(JSON.stringify({ type: 'view_submission' }))).toEqual({ kind: 'ignored', reason: 'interaction_view_submission' });
    expect(parseSlackInteraction(payload({ actions: [{ type: 'static_select', action_id: 'x' }] }))).toEqual({ kind: 'ignored', reason: 'not_a_button' });
    for (const bad of ['not json', '[]', JSON.stringify({ type: 'block_actions' }), payload({ actions: [] })]) {
      expect(() => parseSlackInteraction(bad)).toThrow(PlatformError);
    }
  });
});

describe('Discord MESSAGE_COMPONENT', () => {
  const interaction = (over: Record<string, unknown> = {}) => ({
    id: '900',
    application_id: '555',
    type: 3,
    token: 'tok',
    channel_id: '700',
    guild_id: '800',
    member: { user: { id: '42', username: 'a' }, roles: [] },
    message: { id: '701', channel_id: '700' },
    data: { custom_id: 'apv:tok12345678:s', component_type: 2 },
    ...over,
  });

  it('becomes a button press of the member who pressed', () => {
    expect(parseDiscordInteraction(interaction(), { applicationId: '555' })).toEqual({
      kind: 'button',
      press: { platform: 'discord', accountId: '555', userId: '42', payload: 'apv:tok12345678:s', answer: {} },
    });
  });

  it('leaves other components unsupported and refuses a press without custom_id', () => {
    expect(parseDiscordInteraction(interaction({ data: { custom_id: 'x', component_type: 3, values: ['a'] } }))).toEqual({ kind: 'unsupported', reason: 'component_type_3' });
    expect(() => parseDiscordInteraction(interaction({ data: { component_type: 2 } }))).toThrow(PlatformError);
  });
});
