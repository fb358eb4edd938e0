import { describe, expect, it } from 'vitest';
import { PlatformError } from '../errors.ts';
import { parseSlackEvent } from './parse-event.ts';

const context = { botUserId: 'UBOT', botId: 'BBOT' };

function envelope(event: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    token: 'verification-token',
    team_id: 'T123',
    api_app_id: 'A123',
    type: 'event_callback',
    event_id: 'Ev0001',
    event_time: 1_700_000_000,
    authorizations: [{ enterprise_id: null, team_id: 'T123', user_id: 'UBOT', is_bot: true, is_enterprise_install: false }],
    event,
    ...extra,
  };
}

const dm = { type: 'message', channel: 'D100', channel_type: 'im', user: 'U42', text: '  Hello *there*  ', ts: '1700000000.000100', event_ts: '1700000000.000100' };
const mention = { type: 'app_mention', channel: 'C200', user: 'U42', text: '<@UBOT> what time is it?', ts: '1700000001.000200', event_ts: '1700000001.000200' };

describe('parseSlackEvent', () => {
  it('turns a DM into one conversation per DM channel, unthreaded, keeping the text exactly', () => {
    expect(parseSlackEvent(envelope(dm), context)).toEqual({
      kind: 'message',
      message: {
        platform: 'slack',
        eventId: 'Ev0001',
        userId: 'U42',
        text: '  Hello *there*  ',
        address: { platform: 'slack', accountId: 'T123', chatId: 'D100', threadId: '', userScope: '' },
        replyTarget: { channel: 'D100', messageTs: '1700000000.000100' },
      },
    });
  });

  it('keeps a DM thread apart and replies inside it', () => {
    const result = parseSlackEvent(envelope({ ...dm, thread_ts: '1699999999.000001' }), context);
    expect(result.kind === 'message' && result.message.address.threadId).toBe('1699999999.000001');
    expect(result.kind === 'message' && result.message.replyTarget).toEqual({ channel: 'D100', threadTs: '1699999999.000001', messageTs: '1700000000.000100' });
  });

  it('answers a top-level channel mention in a thread under the mention, scoped to the user', () => {
    expect(parseSlackEvent(envelope(mention), context)).toEqual({
      kind: 'message',
      message: {
        platform: 'slack',
        eventId: 'Ev0001',
        userId: 'U42',
        text: '<@UBOT> what time is it?',
        address: { platform: 'slack', accountId: 'T123', chatId: 'C200', threadId: '1700000001.000200', userScope: 'U42' },
        replyTarget: { channel: 'C200', threadTs: '1700000001.000200', messageTs: '1700000001.000200' },
      },
    });
  });

  it('puts a mention inside a thread in the conversation of that thread', () => {
    const top = parseSlackEvent(envelope(mention), context);
    const reply = parseSlackEvent(envelope({ ...mention, ts: '1700000009.000900', thread_ts: '1700000001.000200', text: '<@UBOT> and now?' }), context);
    expect(reply.kind === 'message' && reply.message.replyTarget).toEqual({ channel: 'C200', threadTs: '1700000001.000200', messageTs: '1700000009.000900' });
    expect(top.kind === 'message' && reply.kind === 'message' && reply.message.address).toEqual(top.kind === 'message' && top.message.address);
  });

  it('ignores the bot itself and other bots', () => {
    expect(parseSlackEvent(envelope({ ...dm, user: 'UBOT' }), context)).toEqual({ kind: 'ignored', reason: 'self' });
    expect(parseSlackEvent(envelope({ ...mention, user: 'UBOT' }), context)).toEqual({ kind: 'ignored', reason: 'self' });
    expect(parseSlackEvent(envelope({ ...dm, user: 'UBOT', bot_id: 'BBOT', app_id: 'A123' }), context)).toEqual({ kind: 'ignored', reason: 'bot_author' });
    expect(parseSlackEvent(envelope({ ...dm, user: 'U77', bot_id: 'BOTHER' }), context)).toEqual({ kind: 'ignored', reason: 'bot_author' });
    const { user: _user, ...noUser } = dm;
    expect(parseSlackEvent(envelope({ ...noUser, subtype: 'bot_message', bot_id: 'BOTHER', username: 'other' }), context)).toEqual({ kind: 'ignored', reason: 'bot_author' });
  });

  it('recognises itself from the envelope authorizations when auth.test was not available', () => {
    expect(parseSlackEvent(envelope({ ...dm, user: 'UBOT' }), {})).toEqual({ kind: 'ignored', reason: 'self' });
  });

  it('ignores edits, deletions and other subtypes', () => {
    const edited = {
      type: 'message',
      subtype: 'message_changed',
      hidden: true,
      channel: 'D100',
      channel_type: 'im',
      ts: '1700000002.000300',
      event_ts: '1700000002.000300',
      message: { type: 'message', user: 'U42', text: 'edited', ts: '1700000000.000100', edited: { user: 'U42', ts: '1700000002.000300' } },
      previous_message: { type: 'message', user: 'U42', text: 'before', ts: '1700000000.000100' },
    };
    expect(parseSlackEvent(envelope(edited), context)).toEqual({ kind: 'ignored', reason: 'unsupported_subtype' });
    const deleted = { type: 'message', subtype: 'message_deleted', hidden: true, channel: 'D100', channel_type: 'im', ts: '1700000003.000400', deleted_ts: '1700000000.000100' };
    expect(parseSlackEvent(envelope(deleted), context)).toEqual({ kind: 'ignored', reason: 'unsupported_subtype' });
    expect(parseSlackEvent(envelope({ ...dm, subtype: 'channel_join' }), context)).toEqual({ kind: 'ignored', reason: 'unsupported_subtype' });
  });

  it('ignores channel messages (mentions arrive as app_mention), unknown events, empty text and quiet envelopes', () => {
    expect(parseSlackEvent(envelope({ ...dm, channel: 'C200', channel_type: 'channel' }), context)).toEqual({ kind: 'ignored', reason: 'not_addressed' });
    expect(parseSlackEvent(envelope({ ...dm, channel: 'G300', channel_type: 'mpim' }), context)).toEqual({ kind: 'ignored', reason: 'not_addressed' });
    expect(parseSlackEvent(envelope({ type: 'reaction_added', user: 'U42', reaction: 'thumbsup' }), context)).toEqual({ kind: 'ignored', reason: 'unsupported_event' });
    expect(parseSlackEvent(envelope({ ...dm, text: '   ' }), context)).toEqual({ kind: 'ignored', reason: 'no_text' });
    expect(parseSlackEvent({ type: 'app_rate_limited', team_id: 'T123', minute_rate_limited: 1518467820, api_app_id: 'A123' }, context)).toEqual({
      kind: 'ignored',
      reason: 'app_rate_limited',
    });
    expect(parseSlackEvent({ token: 't', challenge: 'c', type: 'url_verification' }, context)).toEqual({ kind: 'ignored', reason: 'url_verification' });
  });

  it('rejects something that is not an Events API envelope with INVALID_PAYLOAD', () => {
    const { ts: _ts, ...noTs } = dm;
    const { channel: _channel, ...noChannel } = mention;
    const bodies = [
      null,
      'text',
      [],
      { hello: 'world' },
      { type: 'block_actions' },
      { type: 'event_callback', team_id: 'T1', event: dm },
      { type: 'event_callback', event_id: 'Ev1', event: dm },
      envelope({ no: 'type' }),
      envelope(noTs),
      envelope(noChannel),
      envelope({ ...dm, user: 42 }),
      envelope({ ...dm, thread_ts: 17 }),
    ];
    for (const body of bodies) expect(() => parseSlackEvent(body, context), JSON.stringify(body)).toThrow(PlatformError);
    try {
      parseSlackEvent({ hello: 'world' }, context);
    } catch (error) {
      expect((error as PlatformError).code).toBe('INVALID_PAYLOAD');
    }
  });

  it('takes a DM sharing files (subtype file_share) as input with the files as references', () => {
    const files = [
      { id: 'F1', name: 'shot.png', mimetype: 'image/png', size: 100, url_private: 'https://files.slack.com/x' },
      { id: 'F2', name: 'gone', mode: 'tombstone' },
    ];
    const result = parseSlackEvent(envelope({ ...dm, subtype: 'file_share', text: '', files }), context);
    expect(result.kind === 'message' && result.message).toMatchObject({ text: '', attachments: [{ kind: 'image', ref: 'F1', mime: 'image/png', name: 'shot.png', size: 100 }] });
    expect(parseSlackEvent(envelope({ ...dm, subtype: 'channel_join' }), context)).toEqual({ kind: 'ignored', reason: 'unsupported_subtype' });
  });
});
