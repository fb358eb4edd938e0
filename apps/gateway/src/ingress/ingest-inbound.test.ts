import { describe, expect, it } from 'vitest';
import { PlatformError, type InboundMessage } from '@switchboard/platforms';
import { parseInbound } from './ingest-inbound.ts';

const message = { platform: 'telegram', eventId: '1', userId: 'u', text: 'hi', replyTarget: {} } as unknown as InboundMessage;

describe('parseInbound', () => {
  it('names a PlatformError malformed, keeping its code and message', () => {
    const parsed = parseInbound(() => {
      throw new PlatformError('INVALID_PAYLOAD', 'no chat');
    });
    expect(parsed).toMatchObject({ kind: 'malformed', error: { code: 'INVALID_PAYLOAD', message: 'no chat' } });
  });

  it('rethrows anything that is not a PlatformError: a parser bug is not a malformed event', () => {
    expect(() => parseInbound(() => { throw new TypeError('bug'); })).toThrow('bug');
  });

  it('hands on a result carrying a message, and skips one that carries none', () => {
    expect(parseInbound(() => ({ kind: 'message' as const, message }))).toEqual({ kind: 'message', message });
    expect(parseInbound(() => ({ kind: 'command' as const, name: 'stop', message }))).toEqual({ kind: 'message', message });
    expect(parseInbound(() => ({ kind: 'ping' as const }))).toEqual({ kind: 'skipped', parsed: { kind: 'ping' } });
    expect(parseInbound(() => ({ kind: 'ignored' as const, reason: 'bot' }))).toEqual({ kind: 'skipped', parsed: { kind: 'ignored', reason: 'bot' } });
  });
});
